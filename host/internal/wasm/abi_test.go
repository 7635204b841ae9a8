package wasm

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/plugins/host"
	"github.com/wai-dev/wai/plugins/mock"
	sdktests "github.com/wai-dev/wai/sdk-tests"
	"github.com/wai-dev/wai/sdk-tests/abitest"
)

// wsEnv serves a call's capability uses straight from a workspace: the
// runtime's own conformance, without the kernel's limits and policies
// (the kernel runs the same suite through itself).
type wsEnv struct{ ws backend.Workspace }

func (e wsEnv) Shell() backend.Shell   { return e.ws.Shell() }
func (e wsEnv) FS() backend.Filesystem { return e.ws.FS() }
func (e wsEnv) Session() string        { return "abitest" }

// Limits are those the suite opens every workspace with: the defaults.
func (e wsEnv) Limits() backend.Limits { return backend.DefaultLimits() }
func (e wsEnv) Lifecycle() backend.Lifecycle {
	if lc, ok := e.ws.(backend.Lifecycle); ok {
		return lc
	}
	return nil
}

type runtimeRunner struct{ p *Plugin }

func (r runtimeRunner) Call(ctx context.Context, ws backend.Workspace, tool string, params json.RawMessage) (abitest.Result, error) {
	res, err := r.p.CallTool(ctx, wsEnv{ws}, ToolCall{Tool: tool, Params: params, Session: "abitest", CallID: "abitest-1"})
	return abitest.Result{OK: res.OK, Message: res.Message, Value: res.Value}, err
}

func loadRunner(t *testing.T, wasm []byte) abitest.Runner {
	r := newRuntime(t, Options{})
	p, err := r.Load(context.Background(), Source{Bytes: wasm, Grants: []string{CapShell, CapFSRead, CapFSWrite, CapLifecycle}})
	if err != nil {
		t.Fatal(err)
	}
	return runtimeRunner{p}
}

// The two conformance runs overlap: each has a runtime and workspaces of
// its own.
func TestABIConformanceMock(t *testing.T) {
	t.Parallel()
	abitest.Run(t, abitest.Harness{
		Backend: sdktests.Backend{
			Name: mock.Name,
			Open: func(t *testing.T, l backend.Limits) backend.Workspace {
				ws, err := mock.New(mock.Options{Limits: l}).Open(t.Context(), backend.WorkspaceSpec{Session: "abitest"})
				if err != nil {
					t.Fatal(err)
				}
				return ws
			},
			Caps: sdktests.Caps{Sandboxed: true},
		},
		Load: loadRunner,
	})
}

func TestABIConformanceHost(t *testing.T) {
	t.Parallel()
	abitest.Run(t, abitest.Harness{
		Backend: sdktests.Backend{
			Name: "host",
			Open: func(t *testing.T, l backend.Limits) backend.Workspace {
				b, err := host.New(backend.Options{Limits: l, StateDir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = b.Close(context.Background()) })
				ws, err := b.Open(t.Context(), backend.WorkspaceSpec{Session: "abitest"})
				if err != nil {
					t.Fatal(err)
				}
				return ws
			},
			Caps: sdktests.Caps{RealProcesses: true, Network: true},
		},
		Load: loadRunner,
	})
}

// Interface guards
var (
	_ Env            = wsEnv{}
	_ abitest.Runner = runtimeRunner{}
)
