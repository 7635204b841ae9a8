package host

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// releasingBackend wraps the fake with workspaces that implement
// backend.IdleReleaser, record each release, and can hold a command
// ("block") running until the test lets it go.
type releasingBackend struct {
	*fakeBackend
	unblock  chan struct{}
	started  chan string
	released chan string

	mu       sync.Mutex
	running  map[string]int // session → blocking commands running
	releases map[string]int
	badRel   []string // sessions released while a command ran
}

func newReleasingBackend() *releasingBackend {
	return &releasingBackend{fakeBackend: newFake("fake", true), unblock: make(chan struct{}),
		started: make(chan string, 8), released: make(chan string, 64), running: map[string]int{}, releases: map[string]int{}}
}

func (b *releasingBackend) Open(ctx context.Context, spec backend.WorkspaceSpec) (backend.Workspace, error) {
	ws, err := b.fakeBackend.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &releasingWorkspace{Workspace: ws, b: b, session: spec.Session}, nil
}

type releasingWorkspace struct {
	backend.Workspace
	b       *releasingBackend
	session string
}

func (w *releasingWorkspace) Shell() backend.Shell { return blockingShell{w.Workspace.Shell(), w} }

func (w *releasingWorkspace) ReleaseIdle(context.Context) error {
	w.b.mu.Lock()
	w.b.releases[w.session]++
	if w.b.running[w.session] > 0 {
		w.b.badRel = append(w.b.badRel, w.session)
	}
	w.b.mu.Unlock()
	w.b.released <- w.session
	return nil
}

type blockingShell struct {
	backend.Shell
	w *releasingWorkspace
}

func (s blockingShell) Execute(ctx context.Context, req backend.ExecRequest) (backend.ExecResult, error) {
	if len(req.Argv) == 0 || req.Argv[0] != "block" {
		return s.Shell.Execute(ctx, req)
	}
	b := s.w.b
	b.mu.Lock()
	b.running[s.w.session]++
	b.mu.Unlock()
	b.started <- s.w.session
	<-b.unblock
	b.mu.Lock()
	b.running[s.w.session]--
	b.mu.Unlock()
	return backend.ExecResult{}, nil
}

// waitRelease waits for the release of session (others may come first),
// failing after a minute: releases come every few tens of milliseconds.
func (b *releasingBackend) waitRelease(t *testing.T, session string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case s := <-b.released:
			if s == session {
				return
			}
		case <-deadline:
			t.Fatalf("session %s was not released within a minute", session)
		}
	}
}

// The idle reaper releases an idle session's resources instead of closing
// it: the session stays (same object, same name, its workspace never
// closed), a running command keeps it from being released, and a session
// is released once per idle spell.
func TestIdleSessionsAreReleasedNotClosed(t *testing.T) {
	cfg := testConfig(t)
	cfg.SessionIdleTimeout = 20 * time.Millisecond
	rb := newReleasingBackend()
	k := kernelOn(t, cfg, rb)
	ctx := context.Background()
	idle, long := session(t, k, "idle"), session(t, k, "long")
	errc := make(chan error, 1)
	go func() {
		_, err := long.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"block"}})
		errc <- err
	}()
	<-rb.started
	ls := func() {
		t.Helper()
		if _, err := idle.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"ls"}}); err != nil {
			t.Fatalf("a command after the idle timeout: %v", err)
		}
	}
	ls()
	rb.waitRelease(t, "idle")
	// A second idle spell: by its release the reaper has finished the pass
	// of the first, which saw "long" idle for longer than "idle" but busy.
	ls()
	rb.waitRelease(t, "idle")
	close(rb.unblock)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	rb.waitRelease(t, "long")
	rb.mu.Lock()
	bad, idleReleases := rb.badRel, rb.releases["idle"]
	rb.mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("sessions released while a command ran: %v", bad)
	}
	if idleReleases != 2 {
		t.Errorf("session idle released %d times over two idle spells, want 2 (once per spell)", idleReleases)
	}
	if names := k.Sessions(); len(names) != 2 {
		t.Errorf("idle sessions were forgotten: %v", names)
	}
	if again := session(t, k, "idle"); again != idle {
		t.Errorf("the idle session was replaced by a new one")
	}
	if rb.closes.Load() != 0 || rb.opens.Load() != 2 {
		t.Errorf("idle sessions' workspaces: %d closed, %d opened; want 0 and 2 (released, never closed or reopened)", rb.closes.Load(), rb.opens.Load())
	}
}
