//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// toolChecks is, per purpose, a script run in a hardened session container
// on its image and what its output must contain: the tool chain works,
// not merely exists. Scratch files and caches stay in the workspace (the
// root filesystem is read-only).
var toolChecks = map[string]struct{ script, want string }{
	"python": {`python3 -m pytest --version 2>&1 && python3 -m venv v && v/bin/python -c 'print(6*7)'`, "42"},
	"node":   {`node -e 'console.log(6*7)' && npm --version`, "42"},
	"go": {`export GOCACHE=$PWD/.gocache GOPATH=$PWD/.gopath && mkdir -p hello && cd hello &&
printf 'package main\nimport "fmt"\nfunc main() { fmt.Println(6*7) }\n' >main.go &&
go mod init example.com/hello 2>/dev/null && go build -o hello . && ./hello`, "42"},
	"rust": {`export CARGO_HOME=$PWD/.cargo USER=agent && cargo new --vcs none hello 2>/dev/null && cd hello &&
sed -i 's/println!("Hello, world!")/println!("{}", 6*7)/' src/main.rs && cargo build --offline -q && ./target/debug/hello`, "42"},
	"general": {`printf '#include <stdio.h>\nint main(void){printf("%d\\n",6*7);return 0;}\n' >h.c && cc -o h h.c && ./h &&
make --version >/dev/null && jq -n '1' >/dev/null && tree --version >/dev/null && curl --version >/dev/null`, "42"},
}

// TestPurposeImagesHaveTheirTools builds (when missing) and checks the
// purposes named in $WAI_TEST_IMAGES ("all", or e.g. "go,node"): every
// build takes minutes and hundreds of MB, so it is opt-in; the end to end
// test covers python always.
func TestPurposeImagesHaveTheirTools(t *testing.T) {
	want := os.Getenv("WAI_TEST_IMAGES")
	if want == "" {
		t.Skip("set WAI_TEST_IMAGES=all (or a comma-separated list of purposes) to build and check purpose images")
	}
	purposes := Purposes()
	if want != "all" {
		purposes = strings.Split(want, ",")
	}
	needImageBuild(t)
	cfg, err := ParseConfig(nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range purposes {
		t.Run(p, func(t *testing.T) {
			check, ok := toolChecks[p]
			if !ok || !slices.Contains(Purposes(), p) {
				t.Fatalf("no purpose %q with a tool check", p)
			}
			ctx, cancel := context.WithTimeout(bg, 30*time.Minute)
			defer cancel()
			ref, err := BuildPurposeImage(ctx, cfg, p, BuildOptions{Progress: func(ev ProgressEvent) { t.Logf("%s: %s", ev.Phase, ev.Message) }})
			if err != nil {
				t.Fatalf("BuildPurposeImage(%s): %v", p, err)
			}
			b := newTestBackend(t, backend.Limits{}, map[string]any{"image": ref.Name})
			w := openTest(t, b, false)
			res := run(t, w, backend.ExecRequest{Shell: check.script, Timeout: 5 * time.Minute})
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, check.want) {
				t.Fatalf("%s tools: exit %d\nstdout: %s\nstderr: %s", ref.Name, res.ExitCode, res.Stdout, res.Stderr)
			}
		})
	}
}

// TestPurposeRecipesResolve: every recipe's packages exist in the suite
// and install together — mmdebstrap --simulate with the build's own
// arguments, which resolves dependencies without downloading packages
// (a bad package name fails it). Seconds per recipe, not minutes.
func TestPurposeRecipesResolve(t *testing.T) {
	t.Parallel()
	needImageBuild(t)
	for _, p := range Purposes() {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			r, err := PurposeRecipe(p)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(bg, 10*time.Minute)
			defer cancel()
			dir := t.TempDir()
			args := append([]string{"--simulate"}, mmdebstrapArgs(r, filepath.Join(dir, "rootfs.tar"), debianMirror())...)
			cmd := exec.CommandContext(ctx, "mmdebstrap", args...)
			cmd.Env = append(os.Environ(), "TMPDIR="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("mmdebstrap --simulate for %s: %v\n%s", p, err, out)
			}
		})
	}
}
