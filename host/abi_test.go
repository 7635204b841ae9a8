package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
	_ "github.com/wai-dev/wai/plugins/mock"
	sdktests "github.com/wai-dev/wai/sdk-tests"
	"github.com/wai-dev/wai/sdk-tests/abitest"
)

// The ABI conformance suite through the kernel: the test plugin is loaded
// from a [[plugins]] entry, called with Kernel.Call, and its capability
// uses pass the kernel's guards before they reach the backend. The suite's
// workspace is the kernel's own session, so what it compares against went
// through the same guards.

// kernelRunner calls the test plugin through a kernel; a workspace the
// suite hands in is one of its sessions.
type kernelRunner struct{ k *host.Kernel }

func (r kernelRunner) Call(ctx context.Context, ws backend.Workspace, tool string, params json.RawMessage) (abitest.Result, error) {
	s, ok := ws.(*host.Session)
	if !ok {
		return abitest.Result{}, fmt.Errorf("workspace %T is not a kernel session", ws)
	}
	res, err := r.k.Call(ctx, s.Name(), tool, params)
	return abitest.Result{OK: res.OK, Message: res.Message, Value: res.Value}, err
}

func runABIThroughKernel(t *testing.T, backendName string, caps sdktests.Caps) {
	// Each backend's run has a kernel, a state directory and sessions of
	// its own: the two runs overlap.
	t.Parallel()
	var k *host.Kernel
	var sessions atomic.Int64
	abitest.Run(t, abitest.Harness{
		Backend: sdktests.Backend{
			Name: backendName,
			Open: func(t *testing.T, l backend.Limits) backend.Workspace {
				if l != k.Config().Limits {
					t.Fatalf("the suite asks for limits %+v, the kernel has %+v", l, k.Config().Limits)
				}
				s, err := k.Session(t.Context(), fmt.Sprintf("abitest-%d", sessions.Add(1)), host.SessionOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			Caps: caps,
		},
		Load: func(t *testing.T, wasm []byte) abitest.Runner {
			cfg := host.DefaultConfig()
			cfg.Backend = backendName
			// Workspaces of its own, compiled plugins from the shared cache
			// (a cold compile takes some 20 s under the race detector).
			cfg.StateDir = plugbuild.StateDir(t)
			cfg.BundledTools = []string{}
			// The suite writes over files it never read: it tests the
			// ABI, not the read-before-write rule.
			cfg.ReadBeforeWrite = false
			path := filepath.Join(t.TempDir(), "abitest.wasm")
			if err := os.WriteFile(path, wasm, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg.Plugins = []host.PluginConfig{{Path: path, Grants: []string{"shell", "fs.read", "fs.write", "lifecycle"}}}
			var err error
			k, err = host.New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = k.Close(context.Background()) })
			return kernelRunner{k}
		},
	})
}

func TestABIConformanceThroughKernelMock(t *testing.T) {
	runABIThroughKernel(t, "mock", sdktests.Caps{Sandboxed: true})
}

func TestABIConformanceThroughKernelHost(t *testing.T) {
	runABIThroughKernel(t, "host", sdktests.Caps{RealProcesses: true, Network: true})
}

// Interface guards
var (
	_ abitest.Runner    = kernelRunner{}
	_ backend.Workspace = (*host.Session)(nil)
)
