package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
	"github.com/wai-dev/wai/internal/syncbuf"
	_ "github.com/wai-dev/wai/plugins/host"
)

// pluginFile builds a plugin and writes it where a config can point.
func pluginFile(t testing.TB, pkg string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), filepath.Base(pkg)+".wasm")
	if err := os.WriteFile(path, plugbuild.Build(t, pkg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// hostConfig is a kernel config on the host backend with no bundled
// tools, in the shared state directory (its compilation cache).
func hostConfig() host.Config {
	cfg := host.DefaultConfig()
	cfg.Backend = "host"
	cfg.StateDir = host.SharedStateDir
	cfg.BundledTools = []string{}
	return cfg
}

// startKernel builds a kernel from cfg, closed with the test.
func startKernel(t testing.TB, cfg host.Config, opts ...host.Option) *host.Kernel {
	t.Helper()
	k, err := host.New(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close(context.Background()) })
	return k
}

// openSession opens k's session name (a throwaway one for "").
func openSession(t testing.TB, k *host.Kernel, name string) *host.Session {
	t.Helper()
	s, err := k.Session(context.Background(), name, host.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// loggedKernel builds a kernel from cfg whose events go, as JSON lines, to
// the returned buffer; it is closed with the test.
func loggedKernel(t *testing.T, cfg host.Config) (*host.Kernel, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	return startKernel(t, cfg, host.WithLogger(slog.New(slog.NewJSONHandler(logs, nil)))), logs
}

// A Go tool plugin built with the pdk, listed and called end to end on the
// host backend, its shell use denied with the blocklist's reason.
func TestEndToEndOnHostBackend(t *testing.T) {
	cfg := hostConfig()
	cfg.Plugins = []host.PluginConfig{
		{Path: pluginFile(t, "examples/hello"), Grants: []string{"shell"}},
		{Path: pluginFile(t, "host/testdata/noop"), Grants: []string{"shell"}},
	}
	ctx := context.Background()
	k, logs := loggedKernel(t, cfg)

	var names []string
	for _, tool := range k.Tools() {
		names = append(names, tool.Plugin+"/"+tool.Name)
	}
	if got := strings.Join(names, " "); got != "hello/hello noop/noop noop/run" {
		t.Fatalf("tools: %s", got)
	}

	res, err := k.Call(ctx, "e2e", "hello", json.RawMessage(`{"name":"world"}`))
	if err != nil || !res.OK || !strings.HasPrefix(res.Message, "hello, world\n") {
		t.Fatalf("hello: %+v, %v", res, err)
	}
	// On the host backend every result says it was not sandboxed, to the
	// model (the message) and to a program (the field).
	if res.Sandboxed || !strings.HasSuffix(res.Message, "[wai: this ran on the host backend: NOT sandboxed; commands run directly on the host]") {
		t.Fatalf("a host result must say it is not sandboxed: %+v", res)
	}
	var v struct {
		Backend string `json:"backend"`
	}
	if err := json.Unmarshal(res.Value, &v); err != nil || v.Backend != "host" {
		t.Fatalf("hello value %s: %v", res.Value, err)
	}

	res, err = k.Call(ctx, "e2e", "run", json.RawMessage(`{"shell":"echo one; rm -fr /"}`))
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "blocklist") || !strings.Contains(err.Error(), "recursive rm") {
		t.Fatalf("a plugin's rm -fr / must come back as ErrPermission with the blocklist's reason, got %+v, %v", res, err)
	}

	_, err = k.Call(ctx, "e2e", "hello", json.RawMessage(`{"name":5}`))
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "name") {
		t.Fatalf("bad params: %v", err)
	}

	// The workspace is the session's own directory on the host.
	res, err = k.Call(ctx, "e2e", "run", json.RawMessage(`{"command":["pwd"]}`))
	if err != nil || !strings.Contains(res.Message, filepath.Join("host", "e2e")) {
		t.Fatalf("pwd: %+v, %v", res, err)
	}
	for _, want := range []string{`"msg":"tool.call"`, `"outcome":"denied"`, `"msg":"policy.decision"`, `"msg":"shell.exec"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("events lack %s", want)
		}
	}
}

// With the configured backend unavailable and fallback = "host", commands
// run on the host and every result, event and Info says unsandboxed.
func TestFallbackToHostSaysUnsandboxed(t *testing.T) {
	cfg := host.DefaultConfig()
	cfg.StateDir = host.SharedStateDir
	cfg.BundledTools = []string{}
	cfg.Backend = "podman" // not linked into this test: unavailable
	cfg.Fallback = "host"
	ctx := context.Background()
	k, logs := loggedKernel(t, cfg)
	s := openSession(t, k, "fb")
	res, err := s.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"echo", "fell back"}})
	if err != nil || res.Stdout != "fell back\n" {
		t.Fatalf("%+v, %v", res, err)
	}
	if res.Sandboxed || res.Backend != "host" {
		t.Fatalf("a fallback result claims sandboxed=%v backend=%q", res.Sandboxed, res.Backend)
	}
	if info, _ := s.Shell().Info(t.Context()); info.Sandboxed || info.Backend != "host" {
		t.Fatalf("fallback Info: %+v", info)
	}
	if ok, err := s.Sandboxed(ctx); ok || err != nil {
		t.Fatalf("Sandboxed: %v, %v", ok, err)
	}
	for _, want := range []string{`"msg":"backend.fallback"`, `"fallback":true`, `"sandboxed":false`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("events lack %s:\n%s", want, logs.String())
		}
	}

	// Without a fallback, the unavailable backend is an error that says
	// what to do.
	cfg.Fallback = ""
	s2 := openSession(t, startKernel(t, cfg), "nofb")
	_, err = s2.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"true"}})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "plugins/podman") {
		t.Fatalf("want ErrUnavailable naming the package to import, got %v", err)
	}
}

func TestMissingBundledToolSaysMakePlugins(t *testing.T) {
	cfg := hostConfig()
	cfg.PluginDirs = []string{t.TempDir()}
	cfg.BundledTools = []string{"shell"}
	_, err := host.New(context.Background(), cfg)
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "make plugins") {
		t.Fatalf("want ErrUnavailable saying to run make plugins, got %v", err)
	}
}

func TestPluginSHA256Pin(t *testing.T) {
	cfg := hostConfig()
	cfg.Plugins = []host.PluginConfig{{Path: pluginFile(t, "host/testdata/noop"), SHA256: strings.Repeat("0", 64)}}
	_, err := host.New(context.Background(), cfg)
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("a wrong pin must refuse the plugin: %v", err)
	}
}

// A policy plugin that loops or panics denies, and the kernel keeps
// serving.
func TestMisbehavingPolicyPluginDenies(t *testing.T) {
	path := pluginFile(t, "host/testdata/badpolicy")
	ctx := context.Background()
	for _, mode := range []string{"loop", "panic"} {
		t.Run(mode, func(t *testing.T) {
			cfg := hostConfig()
			cfg.PolicyTimeout = 300 * time.Millisecond
			cfg.Policies = []host.PolicyConfig{{Path: path, Config: map[string]any{"mode": mode}}}
			s := openSession(t, startKernel(t, cfg), "bad")
			for range 2 { // the second check gets a fresh instance
				start := time.Now()
				_, err := s.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"true"}})
				if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "policy badpolicy") {
					t.Fatalf("want a deny from badpolicy, got %v", err)
				}
				if took := time.Since(start); took > 3*time.Second {
					t.Fatalf("the check took %s with a 300ms policy deadline", took)
				}
			}
			// Reads pass no policy, so the session still works.
			if _, err := s.FS().List(ctx, "."); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A tool's deadline reaches into the host functions it calls: a plugin
// whose shell command would run for 30 s is stopped at the tool's 1 s
// timeout, and the command's whole process tree is killed with it.
func TestToolDeadlineStopsItsShellCommand(t *testing.T) {
	cfg := hostConfig()
	cfg.ToolTimeouts = map[string]time.Duration{"run": time.Second}
	cfg.Plugins = []host.PluginConfig{{Path: pluginFile(t, "host/testdata/noop"), Grants: []string{"shell"}}}
	ctx := context.Background()
	k := startKernel(t, cfg)

	// A sleep length no other process uses, to find leftovers by.
	marker := fmt.Sprintf("30.%d", time.Now().UnixNano()%1000000)
	start := time.Now()
	res, err := k.Call(ctx, "deadline", "run", json.RawMessage(`{"shell":"sleep `+marker+` & sleep `+marker+`; echo finished"}`))
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the 1s tool deadline to fail the call, got %+v, %v", res, err)
	}
	if took > 4*time.Second {
		t.Fatalf("the call took %s with a 1s tool timeout: the host function did not honour the call's deadline", took)
	}
	// Killed processes may take a moment to be reaped.
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := sleepers(t, marker)
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d `sleep %s` still running after the tool's deadline", left, marker)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sleepers counts the processes running sleep with this argument (a
// zombie's cmdline is empty, so finished ones do not count).
func sleepers(t *testing.T, arg string) int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("cannot scan /proc: %v", err)
	}
	n := 0
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || string(cmd) != "sleep\x00"+arg+"\x00" {
			continue
		}
		n++
	}
	return n
}
