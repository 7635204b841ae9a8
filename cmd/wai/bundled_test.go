package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// podmanBuildTags are the Makefile's GOTAGS: without them the podman
// backend is a stub.
const podmanBuildTags = "remote exclude_graphdriver_btrfs exclude_graphdriver_devicemapper containers_image_openpgp"

var bundledBin builtOnce

// buildWithBundled builds wai as `make build` does, once per test run:
// the Podman tags, and every bundled tool plugin overlaid into
// cmd/wai/bundled, so the binary carries them.
func buildWithBundled(t *testing.T) string {
	t.Helper()
	return bundledBin.get(t, buildBundled)
}

var bundledWasm struct {
	once  sync.Once
	paths map[string]string
	err   error
}

// bundledWasmPaths is where plugbuild keeps each bundled tool plugin, by
// name, looked up once. Not plugbuild.Build: the binary is built without
// the race detector, so the compilation cache needs no warming for it.
func bundledWasmPaths() (map[string]string, error) {
	bundledWasm.once.Do(func() {
		bundledWasm.paths = map[string]string{}
		for _, name := range host.DefaultConfig().BundledTools {
			p, err := plugbuild.Path(context.Background(), "tools/"+name)
			if err != nil {
				bundledWasm.err = err
				return
			}
			bundledWasm.paths[name] = p
		}
	})
	return bundledWasm.paths, bundledWasm.err
}

// buildBundled builds wai with the Podman tags and the bundled plugins
// overlaid, in buildEnv (it may run in the background, see prebuild).
func buildBundled(dir string) (string, error) {
	wd, err := filepath.Abs(buildDir)
	if err != nil {
		return "", err
	}
	paths, err := bundledWasmPaths()
	if err != nil {
		return "", err
	}
	replace := map[string]string{}
	for name, p := range paths {
		replace[filepath.Join(wd, "bundled", name+".wasm")] = p
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return "", err
	}
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "wai")
	build := exec.Command(goTool, "build", "-tags", podmanBuildTags, "-overlay", ov, "-o", bin, ".")
	build.Env, build.Dir = buildEnv, buildDir
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build with the plugins overlaid: %v\n%s", err, out)
	}
	return bin, nil
}

// The binary carries its plugins: copied into a directory of its own and
// run from an empty one, with no config and no plugin directory anywhere,
// `wai call shell_execute` works (issue: copying bin/wai anywhere but the
// repo failed, plugins were looked up only beside it and in ./build).
func TestCopiedBinaryCarriesItsPlugins(t *testing.T) {
	t.Parallel()
	bin := buildWithBundled(t)
	elsewhere := filepath.Join(t.TempDir(), "x")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(elsewhere, "wai")
	if err := os.WriteFile(copied, data, 0o755); err != nil {
		t.Fatal(err)
	}

	home := t.TempDir()
	cache := filepath.Join(home, "cache")
	if err := os.MkdirAll(filepath.Join(cache, "wai"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Share the tests' Wasm compilation cache: compiling four plugins cold
	// is not what this test is about.
	if err := os.Symlink(plugbuild.CompilationCacheDir(t), filepath.Join(cache, "wai", "wasm")); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WAI_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_CACHE_HOME="+cache)
	run := func(args ...string) (string, string, error) {
		var stdout, stderr strings.Builder
		err := runWritten(func() *exec.Cmd {
			stdout.Reset()
			stderr.Reset()
			cmd := exec.Command(copied, args...)
			cmd.Dir, cmd.Env = t.TempDir(), env
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			return cmd
		})
		return stdout.String(), stderr.String(), err
	}

	out, _, err := run("version")
	if err != nil || !strings.Contains(out, "bundled plugins: built in: ") || !strings.Contains(out, "shell") {
		t.Fatalf("wai version: want the built-in plugins listed; got %v\n%s", err, out)
	}
	// Which backend runs it is the config's business: with none, the
	// default one. What matters here is that the tool was found at all.
	out, stderr, err := run("call", "shell_execute", `{"command":["echo","hi"]}`)
	if err != nil && strings.Contains(stderr, "hint: the backend cannot serve") && os.Getenv("CI") != "true" {
		t.Skipf("the default backend cannot serve on this machine (run scripts/setup-podman.sh as root): %s", stderr)
	}
	if err != nil || !strings.Contains(out, "hi") {
		t.Fatalf("copied wai call shell_execute: want hi; got %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	if strings.Contains(stderr, "make plugins") {
		t.Errorf("stderr asks for make plugins though the binary carries them:\n%s", stderr)
	}
}

// A plain go build carries no plugins and says how to get them, naming
// make build: `make plugins` alone does not help a copied binary.
func TestPlainBuildSaysHowToGetPlugins(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "bundled_tools = [\"shell\"]\n")
	r := e.run("call", "--config", e.config, "shell_execute", `{"command":["true"]}`)
	if r.code == 0 || !strings.Contains(r.stderr, "not built into this wai binary") || !strings.Contains(r.stderr, "make build") {
		t.Errorf("want a failure that says the binary carries no plugins and names make build; got %v", r)
	}
	if r := e.run("version"); !strings.Contains(r.stdout, "bundled plugins: none built in") {
		t.Errorf("wai version: want 'none built in'; got %v", r)
	}
}

// runWritten runs the command cmd makes, whose binary this process has
// just written. Until a child another test forked meanwhile reaches its
// exec, it holds the written file open and exec fails with ETXTBSY
// (golang.org/issue/22315); that passes in moments, so it tries again.
func runWritten(cmd func() *exec.Cmd) error {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := cmd().Run()
		if !errors.Is(err, syscall.ETXTBSY) || time.Now().After(deadline) {
			return err
		}
	}
}
