package mcpserver_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/mcpserver"
)

// slowStart is the host backend with a first command that reports a slow
// step, as the Podman backend does when it starts a container: the report
// has to travel from the MCP handler through the kernel, the Wasm plugin
// and its host function to the backend and back.
const slowStart = "warming up the sandbox"

func init() {
	backend.Register("progress-test", func(ctx context.Context, opts backend.Options) (backend.Backend, error) {
		b, err := backend.Open(ctx, "host", opts)
		if err != nil {
			return nil, err
		}
		return slowBackend{b}, nil
	})
}

type slowBackend struct{ backend.Backend }

func (b slowBackend) Open(ctx context.Context, spec backend.WorkspaceSpec) (backend.Workspace, error) {
	w, err := b.Backend.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	return slowWorkspace{w}, nil
}

type slowWorkspace struct{ backend.Workspace }

func (w slowWorkspace) Shell() backend.Shell { return slowShell{w.Workspace.Shell()} }

type slowShell struct{ backend.Shell }

func (s slowShell) Execute(ctx context.Context, req backend.ExecRequest) (backend.ExecResult, error) {
	done := backend.StartProgress(ctx, slowStart)
	select {
	case <-time.After(700 * time.Millisecond):
	case <-ctx.Done():
	}
	done()
	return s.Shell.Execute(ctx, req)
}

func TestProgressCarriesBackendStage(t *testing.T) {
	cfg := hostConfig(t, noopPlugin)
	cfg.Backend = "progress-test"
	cfg.StateDir = cachedStateDir("mcpserver-progress-state")
	k := startKernel(t, cfg)
	// An interval far longer than the call: a notification naming the
	// stage can only come from the stage's own start.
	s := serve(t, k, mcpserver.Options{ProgressInterval: time.Hour})

	var (
		mu   sync.Mutex
		msgs []string
		last float64
		ok   = true
	)
	cs := stdioClient(t, s, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			msgs = append(msgs, r.Params.Message)
			ok = ok && r.Params.Progress > last
			last = r.Params.Progress
		},
	})
	params := &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"command": []string{"echo", "hi"}}}
	params.SetProgressToken("p2")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError || strings.TrimSpace(text(res)) != "hi" {
		t.Fatalf("run: %v %+v %q", err, res, text(res))
	}
	// Notifications may trail the result on the wire; give them a moment.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := slices.Clone(msgs)
		mu.Unlock()
		if len(got) > 0 {
			if want := "run running for "; !strings.HasPrefix(got[0], want) || !strings.HasSuffix(got[0], ": "+slowStart) {
				t.Errorf("notification %q, want %q…: %s", got[0], want, slowStart)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no progress notification when the backend reported a stage")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if !ok {
		t.Errorf("progress did not increase: %v", msgs)
	}
}
