package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/internal/plugbuild"
)

// The demo's script runs to the end against the host backend, each step
// as the transcript says it goes, so `make demo` keeps working.
func TestDemoOnHostBackend(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is not installed; the demo runs a Python project's tests")
		}
		t.Skip("python3 is not installed: the demo runs a Python project's tests (CI=true makes this a failure)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "wai")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../wai").CombinedOutput(); err != nil {
		t.Fatalf("building wai: %v\n%s", err, out)
	}
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"shell", "vfs"} {
		if err := os.WriteFile(filepath.Join(plugins, name+".wasm"), plugbuild.Build(t, "tools/"+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	config := filepath.Join(dir, "wai.toml")
	toml := fmt.Sprintf("backend = \"host\"\nstate_dir = %q\nplugin_dir = %q\nbundled_tools = [\"shell\", \"vfs\"]\n", filepath.Join(dir, "state"), plugins)
	if err := os.WriteFile(config, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := demo(ctx, &out, bin, []string{"--config", config}); err != nil {
		t.Fatalf("demo: %v\ntranscript so far:\n%s", err, out.String())
	}
	for _, want := range []string{"FAIL test_mean: mean([1, 2, 3]) is 3.0, want 2", "2 tests, 1 failed", "2 tests, 0 failed", "denied by policy blocklist", "Timed out: true", "== done"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("transcript lacks %q:\n%s", want, out.String())
		}
	}
}
