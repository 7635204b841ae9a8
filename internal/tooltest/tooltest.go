// Package tooltest runs the bundled tool plugins' contract tests through a
// real kernel on every backend this machine can serve, so a tool is tested
// the way agents reach it: schema validation, policies, limits, the Wasm
// plugin and the backend, all in the path. Adding a backend is one entry
// in Backends.
package tooltest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
	"github.com/wai-dev/wai/plugins/mock"

	_ "github.com/wai-dev/wai/plugins/host" // the "host" backend, by name
)

// Backend is one way to run the tools.
type Backend struct {
	Name string
	// Real says commands really run (false: the mock's canned results).
	Real bool
	// Lifecycle says the workspace is a container that can be started and
	// stopped (the lifecycle capability works).
	Lifecycle bool
	// Setup adjusts the config and returns kernel options; it may skip t
	// when the backend cannot run here (and must fail it on CI).
	Setup func(t *testing.T, cfg *host.Config) (*mock.Backend, []host.Option)
	// Probe, if set, checks the kernel's backend can serve; it may skip t
	// (and must fail it on CI).
	Probe func(t *testing.T, k *host.Kernel)
}

// Backends are the backends every tool test runs on. A build-tagged file
// adds podman.
var Backends = []Backend{
	{Name: "host", Real: true, Setup: func(_ *testing.T, cfg *host.Config) (*mock.Backend, []host.Option) {
		cfg.Backend = "host"
		return nil, nil
	}},
	{Name: "mock", Setup: func(_ *testing.T, cfg *host.Config) (*mock.Backend, []host.Option) {
		m := mock.New(mock.Options{})
		cfg.Backend = "mock"
		return m, []host.Option{host.WithBackend(m)}
	}},
}

// Env is one kernel on one backend with the tools under test loaded.
type Env struct {
	Backend Backend
	Kernel  *host.Kernel
	// Mock is the mock backend, to script results and read what reached
	// it; nil on the other backends.
	Mock *mock.Backend
}

// Call calls a tool with params given as a JSON string in a fresh session.
func (e *Env) Call(t testing.TB, tool, params string) (host.ToolResult, error) {
	t.Helper()
	return e.Kernel.Call(context.Background(), "", tool, json.RawMessage(params))
}

// CallIn calls a tool in the named session (kept until the kernel closes).
func (e *Env) CallIn(t testing.TB, session, tool, params string) (host.ToolResult, error) {
	t.Helper()
	return e.Kernel.Call(context.Background(), session, tool, json.RawMessage(params))
}

// Value decodes a result's structured value into v, failing t if it cannot.
func Value(t testing.TB, res host.ToolResult, v any) {
	t.Helper()
	if err := json.Unmarshal(res.Value, v); err != nil {
		t.Fatalf("result value %s: %v", res.Value, err)
	}
}

// PluginDir builds the plugins in pkgDirs (relative to the module root)
// into a fresh directory as NAME.wasm, NAME the directory's base name, the
// way `make plugins` names them, and returns it.
func PluginDir(t testing.TB, pkgDirs ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range pkgDirs {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)+".wasm"), plugbuild.Build(t, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// StateDir is shared by every test kernel (the host tests use the same),
// so each plugin is compiled by wazero once per machine, not once per test.
func StateDir(t testing.TB) string {
	base, err := os.UserCacheDir()
	if err != nil {
		return t.TempDir()
	}
	dir := filepath.Join(base, "wai-test", "host-state")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return t.TempDir()
	}
	return dir
}

// Run builds the named plugins (pkgDirs such as "tools/shell") once and
// runs fn on a kernel of each backend, as subtests named after it. adjust,
// if not nil, changes the config first (e.g. a per-tool timeout).
func Run(t *testing.T, pkgDirs []string, adjust func(*host.Config), fn func(t *testing.T, e *Env)) {
	t.Helper()
	RunOn(t, Backends, pkgDirs, adjust, fn)
}

// Only returns the Backends keep accepts, for RunOn in a test that is
// about some of them: a test that skips a backend inside fn has already
// paid for a kernel and its plugins there. With none accepted (Podman not
// linked, say) it skips t.
func Only(t *testing.T, keep func(Backend) bool) []Backend {
	t.Helper()
	var out []Backend
	for _, b := range Backends {
		if keep(b) {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		t.Skip("no backend this test is about is linked in")
	}
	return out
}

// RunOn is Run on the given backends, for a test that changes one of them
// (a mock whose shell answers as the tool's in-sandbox program would).
//
// The backends' subtests run in parallel: each has its own kernel, and a
// Podman one spends most of its time waiting for containers, time the
// others use. So fn must leave process-wide state alone (no t.Setenv)
// and keep what it shares between backends safe for concurrent use.
func RunOn(t *testing.T, backends []Backend, pkgDirs []string, adjust func(*host.Config), fn func(t *testing.T, e *Env)) {
	t.Helper()
	dir := PluginDir(t, pkgDirs...)
	names := make([]string, len(pkgDirs))
	for i, p := range pkgDirs {
		names[i] = filepath.Base(p)
	}
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			cfg := host.DefaultConfig()
			cfg.StateDir = StateDir(t)
			cfg.PluginDirs = []string{dir}
			cfg.BundledTools = names
			if adjust != nil {
				adjust(&cfg)
			}
			m, opts := b.Setup(t, &cfg)
			ctx := context.Background()
			k, err := host.New(ctx, cfg, opts...)
			if err != nil {
				t.Fatalf("kernel on %s: %v", b.Name, err)
			}
			t.Cleanup(func() {
				if err := k.Close(context.Background()); err != nil {
					t.Errorf("closing the kernel: %v", err)
				}
				if m != nil {
					_ = m.Close(context.Background())
				}
			})
			if b.Probe != nil {
				b.Probe(t, k)
			}
			fn(t, &Env{Backend: b, Kernel: k, Mock: m})
		})
	}
}

// Interface guards: the mock must stay a backend for WithBackend.
var _ backend.Backend = (*mock.Backend)(nil)
