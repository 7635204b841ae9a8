package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/mcpserver"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// testPlugin is a plugin the tests build from a package of this module
// and load with grants.
type testPlugin struct {
	pkg    string
	grants []string
}

// noopPlugin serves "run", the test tool most of these tests call.
var noopPlugin = testPlugin{"host/testdata/noop", []string{"shell"}}

// hostConfig is where every test kernel here starts: the host backend, no
// bundled tools, plugins built into a temporary directory, and a state
// directory shared across runs so wazero's compiled modules are reused.
// Plugins are described under policy_timeout; 1 s is not enough for a
// first instantiation with -race on a loaded machine, and these tests are
// about MCP, not policy deadlines.
func hostConfig(t *testing.T, plugins ...testPlugin) host.Config {
	t.Helper()
	dir := t.TempDir()
	cfg := host.DefaultConfig()
	cfg.Backend = "host"
	cfg.BundledTools = []string{}
	for _, p := range plugins {
		path := filepath.Join(dir, filepath.Base(p.pkg)+".wasm")
		if err := os.WriteFile(path, plugbuild.Build(t, p.pkg), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg.Plugins = append(cfg.Plugins, host.PluginConfig{Path: path, Grants: p.grants})
	}
	cfg.PolicyTimeout = 30 * time.Second
	cfg.StateDir = cachedStateDir("mcpserver-state")
	return cfg
}

// cachedStateDir is a state directory under the user's cache directory
// (the temporary directory if there is none), kept across runs.
func cachedStateDir(name string) string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "wai-test", name)
}

// startKernel starts a kernel on cfg for one test, closed when it ends.
func startKernel(t *testing.T, cfg host.Config) *host.Kernel {
	t.Helper()
	k, err := host.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close(context.Background()) })
	return k
}

// sharedKernel is one kernel for every test that asks for it: loading
// plugins is the slow part, and the sessions the tests open are what must
// be isolated, not kernels. It is never closed; the test binary's exit
// ends it.
type sharedKernel struct {
	once sync.Once
	k    *host.Kernel
	err  error
}

// get starts the kernel on config() the first time it is asked for.
func (s *sharedKernel) get(t *testing.T, config func() host.Config) *host.Kernel {
	t.Helper()
	s.once.Do(func() { s.k, s.err = host.New(context.Background(), config()) })
	switch {
	case s.err != nil:
		t.Fatal(s.err)
	case s.k == nil: // config failed the test that first asked
		t.Fatal("the shared kernel could not be configured (see the first test that asked for it)")
	}
	return s.k
}

// serve serves k over MCP for one test, closed when it ends.
func serve(t *testing.T, k *host.Kernel, opts mcpserver.Options) *mcpserver.Server {
	t.Helper()
	s, err := mcpserver.New(k, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}
