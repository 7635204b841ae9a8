// Package cplugin_test builds the C plugin of this directory with clang and
// wasi-libc and runs it through the kernel like any other plugin: the proof
// that docs/ABI.md is enough to write a plugin without the Go pdk.
package cplugin_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/internal/syncbuf"
	_ "github.com/wai-dev/wai/plugins/host"
)

// toolchain finds clang and wasm-ld for wasm32-wasi. Off CI a missing one
// skips (scripts/setup-wasm-toolchain.sh installs them); on CI it fails.
func toolchain(t *testing.T) (clang, ldDir string) {
	t.Helper()
	missing := func(what string) {
		msg := what + " not found: run scripts/setup-wasm-toolchain.sh (as root) to build the C plugin"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, name := range []string{"clang-14", "clang"} {
		if p, err := exec.LookPath(name); err == nil {
			clang = p
			break
		}
	}
	if clang == "" {
		missing("clang")
	}
	// clang runs "wasm-ld"; Debian names it wasm-ld-14 on the PATH and
	// plain wasm-ld only in LLVM's own bin directory.
	for _, name := range []string{"wasm-ld", "wasm-ld-14"} {
		if p, err := exec.LookPath(name); err == nil {
			ldDir = filepath.Dir(p)
			if filepath.Base(p) != "wasm-ld" {
				if real, err := filepath.EvalSymlinks(p); err == nil {
					ldDir = filepath.Dir(real)
				}
			}
			break
		}
	}
	if ldDir == "" {
		missing("wasm-ld")
	}
	if _, err := os.Stat("/usr/lib/wasm32-wasi/libc.a"); err != nil {
		missing("wasi-libc (/usr/lib/wasm32-wasi/libc.a)")
	}
	return clang, ldDir
}

func build(t *testing.T) string {
	clang, ldDir := toolchain(t)
	out := filepath.Join(t.TempDir(), "word_count.wasm")
	cmd := exec.Command(clang, "--target=wasm32-wasi", "--sysroot=/usr", "-mexec-model=reactor",
		"-O2", "-Wall", "-Wextra", "-Werror", "-fuse-ld=lld", "-o", out, filepath.Join("src", "word_count.c"))
	cmd.Env = append(os.Environ(), "PATH="+ldDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
	return out
}

func TestCPluginThroughKernel(t *testing.T) {
	path := build(t)
	cfg := host.DefaultConfig()
	cfg.Backend = "host" // wc runs on this machine: not a sandbox
	cfg.StateDir = t.TempDir()
	cfg.BundledTools = []string{}
	cfg.Plugins = []host.PluginConfig{{Path: path, Grants: []string{"shell"}}}
	var logs syncbuf.Buffer
	ctx := context.Background()
	k, err := host.New(ctx, cfg, host.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(ctx)

	tools := k.Tools()
	if len(tools) != 1 || tools[0].Name != "word_count" || tools[0].Plugin != "word_count" ||
		tools[0].Annotations == nil || !tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("tools: %+v", tools)
	}

	for _, c := range []struct {
		text  string
		words int
		msg   string
	}{
		{"hello wasm world\n  from C", 5, "5 words"},
		{"one", 1, "1 word"},
		{"", 0, "0 words"},
		// Escapes both ways: quotes, backslashes, tabs, non-ASCII and a
		// surrogate pair survive into wc's stdin intact.
		{"say \"hi\"\t\\ caf\u00e9 \U0001F600 end", 6, "6 words"},
	} {
		params, _ := json.Marshal(map[string]string{"text": c.text})
		res, err := k.Call(ctx, "cplug", "word_count", params)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		var v struct {
			Words   int `json:"words"`
			WcWords int `json:"wc_words"`
		}
		if err := json.Unmarshal(res.Value, &v); err != nil {
			t.Fatalf("%q: value %s: %v", c.text, res.Value, err)
		}
		// The kernel ends an unsandboxed result with a line saying so.
		msg, _, _ := strings.Cut(res.Message, "\n\n[wai: this ran on the host backend")
		if !res.OK || msg != c.msg || v.Words != c.words || v.WcWords != c.words {
			t.Errorf("%q: ok=%v %q %s; want %q with wc agreeing", c.text, res.OK, res.Message, res.Value, c.msg)
		}
	}

	// Its wai_log reached the kernel's log, and its wc ran as a shell.exec.
	for _, want := range []string{`plugin.log: word_count called`, `"msg":"shell.exec"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("events lack %s:\n%s", want, logs.String())
		}
	}

	// Without the shell grant it does not load, and the error says why.
	cfg.Plugins[0].Grants = nil
	cfg.StateDir = t.TempDir()
	if k2, err := host.New(ctx, cfg); err == nil {
		k2.Close(ctx)
		t.Fatal("the C plugin loaded without the shell grant")
	} else if !strings.Contains(err.Error(), "wai_shell_exec") {
		t.Errorf("refusal without grant: %v", err)
	}
}
