package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/internal/wasm"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// TestSessionBusyKeepsItsMessage: a tool call that waited out its
// deadline for one of its session's call slots reports that, with the key
// to raise, not that the tool ran too long.
func TestSessionBusyKeepsItsMessage(t *testing.T) {
	busy := &goTools{name: "busy", tools: map[string]func(context.Context, wasm.Env, json.RawMessage) (wasm.ToolResult, error){
		// What the Wasm runtime answers when the session's slots stay taken.
		"wait": func(ctx context.Context, _ wasm.Env, _ json.RawMessage) (wasm.ToolResult, error) {
			<-ctx.Done()
			return wasm.ToolResult{}, &backend.Error{Kind: backend.ErrInvalid, Op: "call", Path: "wait",
				Msg: "session s already runs 8 tool calls, the most limits.session_concurrent_calls allows",
				Err: fmt.Errorf("%w: %w", wasm.ErrSessionBusy, ctx.Err())}
		},
	}}
	k, _ := newKernel(t, testConfig(t), withTools(busy, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := k.Call(ctx, "s", "wait", nil)
	if !errors.Is(err, wasm.ErrSessionBusy) || !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "limits.session_concurrent_calls") {
		t.Errorf("err = %v, want the session-busy error naming limits.session_concurrent_calls", err)
	}
}

// holdBackend is the fake backend, except that the command "hold" runs
// until the test releases it: a long tool call that burns no CPU.
type holdBackend struct {
	*fakeBackend
	started chan string // the session of each hold that began
	release chan struct{}
}

func (b *holdBackend) Open(ctx context.Context, spec backend.WorkspaceSpec) (backend.Workspace, error) {
	ws, err := b.fakeBackend.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	return holdWorkspace{ws, b, spec.Session}, nil
}

type holdWorkspace struct {
	backend.Workspace
	b       *holdBackend
	session string
}

func (w holdWorkspace) Shell() backend.Shell { return holdShell{w.Workspace.Shell(), w} }

type holdShell struct {
	backend.Shell
	w holdWorkspace
}

func (s holdShell) Execute(ctx context.Context, req backend.ExecRequest) (backend.ExecResult, error) {
	if len(req.Argv) != 1 || req.Argv[0] != "hold" {
		return s.Shell.Execute(ctx, req)
	}
	s.w.b.started <- s.w.session
	select {
	case <-s.w.b.release:
		return backend.ExecResult{Stdout: "released", Command: req.Argv, Backend: "fake"}, nil
	case <-ctx.Done():
		return backend.ExecResult{}, ctx.Err()
	}
}

// TestLongCallsOfOneSessionDoNotBlockAnother: through the kernel, with a
// real Wasm plugin, one session running as many long calls as its cap
// allows leaves another session's call free to complete while they still
// run (event-ordered: all of them are inside their command).
func TestLongCallsOfOneSessionDoNotBlockAnother(t *testing.T) {
	cfg := testConfig(t)
	cfg.StateDir = SharedStateDir // its compilation cache
	cfg.Plugins = []PluginConfig{{Path: statefulPlugin(t), Grants: []string{"shell"}}}
	// wai_describe runs under policy_timeout; a Go guest's first call can
	// take longer than a second under -race on a busy machine.
	cfg.PolicyTimeout = 30 * time.Second
	hb := &holdBackend{fakeBackend: newFake("fake", true), started: make(chan string, 64), release: make(chan struct{})}
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(hb.release) }) }
	k := kernelOn(t, cfg, hb)
	// Cleanups run last first: the held calls are let go before the close.
	t.Cleanup(releaseAll)

	n := cfg.SessionConcurrentCalls
	held := make(chan error, n)
	for range n {
		go func() {
			res, err := k.Call(context.Background(), "greedy", "hold", nil)
			if err == nil && res.Message != "released" {
				err = fmt.Errorf("hold answered %+v", res)
			}
			held <- err
		}()
	}
	for range n {
		<-hb.started
	}
	// Generous, yet shorter than the held calls' own deadline (the tool
	// timeout, 1 min): a starved call fails here, not after they give up.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := k.Call(ctx, "other", "remember", json.RawMessage(`{"value":"v"}`))
	if err != nil || !res.OK {
		t.Fatalf("other session's call while greedy holds %d calls: %+v, %v", n, res, err)
	}
	select {
	case err := <-held:
		t.Fatalf("a held call returned before release: %v", err)
	default:
	}
	releaseAll()
	for range n {
		if err := <-held; err != nil {
			t.Errorf("held call: %v", err)
		}
	}
}

// statefulPlugin writes the stateful test plugin where a config can point.
func statefulPlugin(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "stateful.wasm")
	if err := os.WriteFile(path, plugbuild.Build(t, "host/internal/wasm/testdata/stateful"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
