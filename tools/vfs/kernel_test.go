package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/internal/plugbuild"
	_ "github.com/wai-dev/wai/plugins/host"
	_ "github.com/wai-dev/wai/plugins/mock"
)

// backends the contract runs on: adding one is one line (podman joins in
// podman_test.go, behind its build tags).
var backends = []string{"host", "mock"}

// stateDir outlives the process like the build cache: the compilation cache
// in it spares every run wazero's seconds-long compile of the plugin.
func stateDir(t testing.TB) string {
	if base, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(base, "wai-test", "vfs-state")
		if err := os.MkdirAll(dir, 0o700); err == nil {
			return dir
		}
	}
	return t.TempDir()
}

var (
	pluginOnce sync.Once
	pluginDir  string
	pluginErr  error
)

// bundledDir builds the plugins once per process into a directory laid out
// like build/plugins, so the kernel loads them as the bundled "vfs" and
// "shell" (the scenario test drives both).
func bundledDir(t testing.TB) string {
	pluginOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wai-vfs-plugins-")
		if err != nil {
			pluginErr = err
			return
		}
		pluginDir = dir
		for _, pkg := range []string{"tools/vfs", "tools/shell"} {
			path := filepath.Join(dir, filepath.Base(pkg)+".wasm")
			if pluginErr = os.WriteFile(path, plugbuild.Build(t, pkg), 0o644); pluginErr != nil {
				return
			}
		}
	})
	if pluginErr != nil {
		t.Fatal(pluginErr)
	}
	return pluginDir
}

// newKernel builds a kernel on the named backend with the bundled vfs
// plugin (and any extra bundled tools) and closes it with the test.
func newKernel(t testing.TB, backendName string, extra ...string) *host.Kernel {
	t.Helper()
	cfg := host.DefaultConfig()
	cfg.Backend = backendName
	cfg.StateDir = stateDir(t)
	cfg.PluginDir = bundledDir(t)
	cfg.BundledTools = append([]string{"vfs"}, extra...)
	ctx := context.Background()
	k, err := host.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close(ctx) })
	return k
}

// client calls tools in one session of a kernel.
type client struct {
	t       testing.TB
	k       *host.Kernel
	session string
}

func (c client) call(tool string, params any) host.ToolResult {
	c.t.Helper()
	raw, err := json.Marshal(params)
	if err != nil {
		c.t.Fatal(err)
	}
	res, err := c.k.Call(context.Background(), c.session, tool, raw)
	if err != nil {
		c.t.Fatalf("%s %s: %v", tool, raw, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its message.
func (c client) ok(tool string, params any) string {
	c.t.Helper()
	res := c.call(tool, params)
	if !res.OK {
		c.t.Fatalf("%s %v failed: %s", tool, params, res.Message)
	}
	return res.Message
}

// fails calls a tool that must fail with a message containing want.
func (c client) fails(tool string, params any, want string) {
	c.t.Helper()
	res := c.call(tool, params)
	if res.OK || !strings.Contains(res.Message, want) {
		c.t.Errorf("%s %v: want a failed result containing %q, got ok=%v %q", tool, params, want, res.OK, res.Message)
	}
}

var sessionSeq struct {
	sync.Mutex
	n int
}

// session returns a client on a fresh session (a fresh, empty workspace),
// closed with the test.
func session(t *testing.T, k *host.Kernel) client {
	sessionSeq.Lock()
	sessionSeq.n++
	name := fmt.Sprintf("vfs-%d-%d", os.Getpid(), sessionSeq.n)
	sessionSeq.Unlock()
	ctx := context.Background()
	s, err := k.Session(ctx, name, host.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(ctx) })
	return client{t: t, k: k, session: name}
}
