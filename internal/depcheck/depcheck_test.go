package depcheck

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/internal/filetree"
)

const mod = "github.com/wai-dev/wai"

// pkg builds a local package of a synthetic graph at rel with the given
// direct imports; an import starting with "+" is relative to the module.
func pkg(rel string, imports ...string) Package {
	p := Package{ImportPath: abs("+" + rel)}
	for _, i := range imports {
		p.Imports = append(p.Imports, abs(i))
	}
	return p
}

func abs(s string) string {
	if rel, ok := strings.CutPrefix(s, "+"); ok {
		return mod + "/" + rel
	}
	return s
}

// closeDeps fills in Deps from Imports, as go list does.
func closeDeps(pkgs []Package) []Package {
	byPath := map[string]*Package{}
	for i := range pkgs {
		byPath[pkgs[i].ImportPath] = &pkgs[i]
	}
	for i := range pkgs {
		seen := map[string]bool{}
		var walk func(string)
		walk = func(p string) {
			if q, ok := byPath[p]; ok {
				for _, d := range q.Imports {
					if !seen[d] {
						seen[d] = true
						walk(d)
					}
				}
			}
		}
		walk(pkgs[i].ImportPath)
		for d := range seen {
			pkgs[i].Deps = append(pkgs[i].Deps, d)
		}
		slices.Sort(pkgs[i].Deps)
	}
	return pkgs
}

func TestRules(t *testing.T) {
	type edge struct{ from, dep string }
	cases := []struct {
		name string
		pkgs []Package
		want []edge // every violation, as (package, dependency)
	}{
		{
			name: "a layout that follows docs/ARCHITECTURE.md",
			pkgs: []Package{
				pkg("host/backend", "context", "io/fs"),
				pkg("host/backend/internal/x", "strings"),
				pkg("host", "+host/backend", "+host/internal/wasm", "github.com/extism/go-sdk"),
				pkg("host/internal/wasm", "+host/backend", "github.com/tetratelabs/wazero"),
				pkg("host/config", "+host", "+host/internal/wasm", "github.com/BurntSushi/toml"),
				pkg("host/mcpserver", "+host", "+host/config", "github.com/modelcontextprotocol/go-sdk/mcp"),
				pkg("plugins/host", "+host/backend", "+internal/fsroot", "golang.org/x/sys/unix"),
				pkg("internal/fsroot", "+host/backend", "+internal/atomicfile"),
				pkg("internal/atomicfile", "os", "path/filepath"),
				pkg("internal/syncbuf", "bytes", "sync"),
				pkg("plugins/mock", "+host/backend"),
				pkg("plugins/podman", "+host/backend", "github.com/containers/podman/v5/pkg/bindings"),
				pkg("pdk", "encoding/json", "github.com/extism/go-pdk", "+pdk/internal/raw"),
				pkg("pdk/internal/raw", "unsafe"),
				pkg("tools/shell", "+pdk", "+tools/shell/text", "strings"),
				pkg("tools/shell/text", "strings"),
				pkg("policies/blocklist", "+pdk", "+policies/internal/shellparse"),
				pkg("policies/internal/shellparse", "strings", "mvdan.cc/sh/v3/syntax"),
				pkg("sdk-tests", "+host/backend", "testing"),
				pkg("sdk-tests/abitest", "+host", "+host/backend", "+internal/plugbuild"),
				pkg("plugins/kubernetes", "+host/backend", "context"),
				pkg("plugins/kubernetes/podspec", "+host/backend", "k8s.io/api/core/v1", "k8s.io/apimachinery/pkg/api/resource"),
				pkg("cmd/wai", "+host", "+host/config", "+host/mcpserver", "+plugins/host", "+plugins/mock", "+plugins/podman", "+plugins/kubernetes"),
			},
		},
		{
			name: "wai-agent reaching past the standard library and the confined filesystem",
			pkgs: []Package{
				pkg("cmd/wai-agent", "+internal/agent"),
				pkg("internal/agent", "+internal/agentfs", "+host/backend/rootfs", "+internal/jobring", "+internal/plugbuild"),
				pkg("internal/agentfs", "+host/backend", "+internal/agentproto"),
				pkg("internal/agentproto", "encoding/json", "golang.org/x/sys/unix"),
				pkg("host/backend/rootfs", "+host/backend"),
				pkg("host/backend"),
				pkg("internal/jobring", "os"),
				pkg("internal/plugbuild", "os/exec"),
			},
			want: []edge{
				{"cmd/wai-agent", mod + "/internal/plugbuild"},
				{"cmd/wai-agent", "golang.org/x/sys/unix"},
				{"internal/agent", mod + "/internal/plugbuild"},
				{"internal/agent", "golang.org/x/sys/unix"},
				{"internal/agentfs", "golang.org/x/sys/unix"},
				{"internal/agentproto", "golang.org/x/sys/unix"},
			},
		},
		{
			name: "a shared helper reaching beyond the standard library",
			pkgs: []Package{
				pkg("internal/atomicfile", "os", "+host/backend"),
				pkg("internal/syncbuf", "sync", "github.com/google/uuid"),
				pkg("host/backend"),
			},
			want: []edge{
				{"internal/atomicfile", mod + "/host/backend"},
				{"internal/syncbuf", "github.com/google/uuid"},
			},
		},
		{
			name: "the kernel linking the file format or the MCP server",
			pkgs: []Package{
				pkg("host", "+host/internal/wasm", "github.com/BurntSushi/toml"),
				pkg("host/internal/wasm", "+host/mcpserver"),
				pkg("host/mcpserver", "github.com/modelcontextprotocol/go-sdk/mcp"),
				pkg("host/config", "+host", "github.com/BurntSushi/toml"),
			},
			want: []edge{
				{"host", "github.com/BurntSushi/toml"},
				{"host", "github.com/modelcontextprotocol/go-sdk/mcp"},
				{"host", mod + "/host/mcpserver"},
				{"host/internal/wasm", "github.com/modelcontextprotocol/go-sdk/mcp"},
				{"host/internal/wasm", mod + "/host/mcpserver"},
			},
		},
		{
			name: "host/backend reaching beyond the standard library",
			pkgs: []Package{
				pkg("host/backend", "context", "+host/backend/x", "github.com/BurntSushi/toml"),
				pkg("host/backend/x", "+host"),
				pkg("host"),
			},
			want: []edge{{"host/backend", "github.com/BurntSushi/toml"}, {"host/backend/x", mod + "/host"}},
		},
		{
			name: "host importing a backend, even through a helper",
			pkgs: []Package{
				pkg("host", "+host/backend", "+internal/wiring"),
				pkg("internal/wiring", "+plugins/mock"),
				pkg("plugins/mock", "+host/backend"),
				pkg("host/backend"),
			},
			want: []edge{{"host", mod + "/plugins/mock"}},
		},
		{
			name: "a plugin importing the kernel or another plugin",
			pkgs: []Package{
				pkg("plugins/host", "+host/backend", "+host/events"),
				pkg("host/events"),
				pkg("plugins/mock", "+internal/share"),
				pkg("internal/share", "+plugins/host/root"),
				pkg("plugins/host/root", "+host/backend"),
				pkg("plugins/podman", "+plugins/podman/exec", "+host/backend/x"),
				pkg("plugins/podman/exec"),
				pkg("host/backend/x"),
				pkg("host/backend"),
			},
			want: []edge{
				{"plugins/host", mod + "/host/events"},
				{"plugins/mock", mod + "/plugins/host/root"},
			},
		},
		{
			name: "pdk reaching the host or another library",
			pkgs: []Package{
				pkg("pdk", "github.com/extism/go-pdk/internal/memory", "+host/backend", "github.com/google/jsonschema-go/jsonschema"),
				pkg("host/backend"),
			},
			want: []edge{{"pdk", "github.com/google/jsonschema-go/jsonschema"}, {"pdk", mod + "/host/backend"}},
		},
		{
			name: "a Wasm plugin importing past the pdk",
			pkgs: []Package{
				pkg("tools/vfs", "+pdk", "+tools/shell/text", "github.com/extism/go-pdk", "+policies/internal/shellparse", "mvdan.cc/sh/v3/syntax"),
				pkg("policies/internal/shellparse"),
				pkg("tools/shell/text"),
				pkg("policies/allowlist", "+host/backend", "+policies/allowlist/rules"),
				pkg("policies/allowlist/rules", "regexp"),
				pkg("pdk"),
				pkg("host/backend"),
			},
			want: []edge{
				{"policies/allowlist", mod + "/host/backend"},
				{"tools/vfs", "github.com/extism/go-pdk"},
				{"tools/vfs", mod + "/policies/internal/shellparse"},
				{"tools/vfs", mod + "/tools/shell/text"},
				{"tools/vfs", "mvdan.cc/sh/v3/syntax"},
			},
		},
		{
			name: "sdk-tests importing the kernel or a backend",
			pkgs: []Package{
				pkg("sdk-tests", "+host", "+plugins/mock"),
				pkg("sdk-tests/fstest", "+host/backend"),
				pkg("sdk-tests/abitest", "+host", "+cmd/wai"),
				pkg("host"),
				pkg("plugins/mock"),
				pkg("cmd/wai"),
				pkg("host/backend"),
			},
			want: []edge{
				{"sdk-tests", mod + "/host"},
				{"sdk-tests", mod + "/plugins/mock"},
				{"sdk-tests/abitest", mod + "/cmd/wai"},
			},
		},
		{
			name: "Podman bindings outside the podman backend",
			pkgs: []Package{
				pkg("host", "+internal/gc"),
				pkg("internal/gc", "github.com/containers/podman/v5/pkg/bindings/containers"),
				pkg("plugins/podman", "github.com/containers/podman/v5/pkg/bindings"),
				pkg("cmd/wai", "+plugins/podman"),
			},
			want: []edge{
				{"host", "github.com/containers/podman/v5/pkg/bindings/containers"},
				{"internal/gc", "github.com/containers/podman/v5/pkg/bindings/containers"},
			},
		},
		{
			name: "Kubernetes libraries outside the kubernetes backend, or a client inside it",
			pkgs: []Package{
				pkg("host", "+internal/kube"),
				pkg("internal/kube", "k8s.io/apimachinery/pkg/api/resource"),
				pkg("plugins/kubernetes", "+host/backend", "+plugins/kubernetes/podspec", "+host/events"),
				pkg("plugins/kubernetes/podspec", "k8s.io/api/core/v1", "k8s.io/client-go/kubernetes", "github.com/google/uuid"),
				pkg("host/backend"),
				pkg("host/events"),
			},
			want: []edge{
				{"host", "k8s.io/apimachinery/pkg/api/resource"},
				{"internal/kube", "k8s.io/apimachinery/pkg/api/resource"},
				{"plugins/kubernetes", mod + "/host/events"},
				{"plugins/kubernetes/podspec", "github.com/google/uuid"},
				{"plugins/kubernetes/podspec", "k8s.io/client-go/kubernetes"},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Check(mod, closeDeps(c.pkgs))
			var gotEdges []edge
			for _, v := range got {
				gotEdges = append(gotEdges, edge{v.Package, v.Dep})
				if v.Rule == "" || len(v.Chain) < 2 || v.Chain[0] != v.Package {
					t.Errorf("violation %v lacks a rule or a chain starting at the package", v)
				}
			}
			gotEdges = slices.Compact(gotEdges) // one edge may break two rules
			if !slices.Equal(gotEdges, c.want) {
				t.Errorf("violations:\n got  %v\n want %v", gotEdges, c.want)
				for _, v := range got {
					t.Log(v)
				}
			}
		})
	}
}

func TestChainNamesTheCulprit(t *testing.T) {
	pkgs := closeDeps([]Package{
		pkg("plugins/mock", "+internal/a"),
		pkg("internal/a", "+internal/b"),
		pkg("internal/b", "+host"),
		pkg("host"),
	})
	got := Check(mod, pkgs)
	if len(got) != 1 {
		t.Fatalf("want one violation, got %v", got)
	}
	want := []string{"plugins/mock", "internal/a", "internal/b", "host"}
	if !slices.Equal(got[0].Chain, want) {
		t.Errorf("chain = %v, want %v", got[0].Chain, want)
	}
	if s := got[0].String(); !strings.Contains(s, "plugins/mock → internal/a → internal/b → host") {
		t.Errorf("message %q does not show the chain", s)
	}
}

// TestSyntheticModule runs the whole pipeline, `go list` included, on a
// module on disk that breaks the rules, so a checker that silently sees
// nothing (wrong directory, wrong flags, empty output) fails here.
func TestSyntheticModule(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                    "module " + mod + "\n\ngo 1.25\n",
		"host/host.go":              "package host\n\nimport _ \"" + mod + "/host/backend\"\n",
		"host/backend/backend.go":   "package backend\n\nimport _ \"os/exec\"\n",
		"host/backend/leak/leak.go": "package leak\n\nimport _ \"" + mod + "/host\"\n",
		"plugins/mock/mock.go":      "package mock\n\nimport _ \"" + mod + "/internal/bridge\"\n",
		"internal/bridge/bridge.go": "package bridge\n\nimport _ \"" + mod + "/plugins/host\"\n",
		"plugins/host/host.go":      "package host\n\nimport _ \"" + mod + "/host/backend\"\n",
		"tools/shell/main.go":       "//go:build wasip1\n\npackage main\n\nimport _ \"" + mod + "/host/backend\"\n\nfunc main() {}\n",
	}
	filetree.Write(t, dir, files)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	want := map[Target][]string{
		// The Wasm-only tool is invisible natively and caught on wasip1.
		{}: {
			"host/backend/leak → " + mod + "/host",
			"plugins/mock → " + mod + "/plugins/host",
		},
		{GOOS: "wasip1", GOARCH: "wasm"}: {
			"host/backend/leak → " + mod + "/host",
			"plugins/mock → " + mod + "/plugins/host",
			"tools/shell → " + mod + "/host/backend",
		},
	}
	for target, w := range want {
		module, pkgs, err := List(ctx, dir, target)
		if err != nil {
			t.Fatal(err)
		}
		if module != mod {
			t.Fatalf("module = %q, want %q", module, mod)
		}
		var got []string
		for _, v := range Check(module, pkgs) {
			got = append(got, v.Package+" → "+v.Dep)
		}
		got = slices.Compact(got)
		if !slices.Equal(got, w) {
			t.Errorf("%s: violations\n got  %q\n want %q", target, got, w)
		}
	}
}

// TestRepository checks wai itself, on every platform and tag set its code
// is built for: natively with and without the Podman tags (the podman
// package is tag-guarded, so each variant has its own imports) and for
// wasip1, where the pdk and the bundled plugins live.
func TestRepository(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tags := makefileTags(t, filepath.Join(root, "Makefile"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, target := range []Target{{}, {Tags: tags}, {GOOS: "wasip1", GOARCH: "wasm"}} {
		t.Run(target.String(), func(t *testing.T) {
			module, pkgs, err := List(ctx, root, target)
			if err != nil {
				t.Fatal(err)
			}
			local := 0
			for _, p := range pkgs {
				if _, ok := relPath(module, p.ImportPath); ok {
					local++
				}
			}
			// host/backend always exists: if it is missing, the listing
			// went wrong and an empty result would prove nothing.
			if !slices.ContainsFunc(pkgs, func(p Package) bool { return p.ImportPath == module+"/host/backend" }) {
				t.Fatalf("go list found %d local packages and not host/backend: wrong directory?", local)
			}
			for _, v := range Check(module, pkgs) {
				t.Errorf("%v", v)
			}
		})
	}
}

// makefileTags reads GOTAGS from the Makefile, so the tag set lives in one
// place.
func makefileTags(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("reading the build tags: %v", err)
	}
	defer f.Close()
	re := regexp.MustCompile(`^GOTAGS\s*\??=\s*(.+)$`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			return strings.TrimSpace(m[1])
		}
	}
	t.Fatalf("%s defines no GOTAGS: the Podman build tags belong there", path)
	return ""
}
