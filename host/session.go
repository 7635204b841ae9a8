package host

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/internal/wasm"
)

// Session is one agent's sandbox as the kernel guards it: a Shell and an
// FS that pass every call through limits and policies, over a workspace
// opened on first use. It is safe for concurrent use.
type Session struct {
	k    *Kernel
	spec backend.WorkspaceSpec

	last     atomic.Int64 // unix nanoseconds of the last use
	inflight atomic.Int64 // capability calls running now

	// idleMu lets the idle reaper release the workspace's resources with
	// no call starting meanwhile (it holds the write lock; begin the read
	// lock). released is the last use the reaper has already handled.
	idleMu   sync.RWMutex
	released atomic.Int64

	mu       sync.Mutex // guards ws, fellBack, closed
	ws       backend.Workspace
	fellBack bool
	// info is what the workspace said of itself when it was opened.
	info    backend.Info
	closed  bool
	opening chan struct{} // non-nil while a goroutine opens ws

	readMu sync.Mutex
	seen   map[string]fingerprint // files this session read or wrote, as they were then (read_before_write)

	tools map[string]bool // nil: every tool

	approver Approver  // asks a person when a policy asks; nil: deny
	approved approvals // what the person approved for the session

	// plugins holds the session's own Wasm plugin instances (nil when the
	// kernel loads no plugin): thrown away on Close, never shared.
	plugins *wasm.Scope

	shell *guardedShell
	fs    *guardedFS
	lc    *guardedLifecycle
	jobs  *guardedJobs
	book  jobBook // its jobs, to report those the backend forgot (session_jobbook.go)

	// containersReady: a preflight passed, so create runs none itself;
	// containersUsed: the session made containers, which Close destroys
	// unless persistent.
	containersReady atomic.Bool
	containersUsed  atomic.Bool
	// createMu makes a session's creates one at a time, so the count
	// max_containers_per_session judges is the count the create adds to.
	createMu sync.Mutex
}

func newSession(k *Kernel, spec backend.WorkspaceSpec, tools []string) *Session {
	s := &Session{k: k, spec: spec, seen: map[string]fingerprint{}}
	if tools != nil {
		s.tools = map[string]bool{}
		for _, t := range tools {
			s.tools[t] = true
		}
	}
	s.shell = &guardedShell{s: s}
	s.fs = &guardedFS{s: s}
	s.lc = &guardedLifecycle{s: s}
	s.jobs = &guardedJobs{s: s}
	if k.rt != nil {
		s.plugins = k.rt.NewScope(spec.Session)
	}
	s.touch()
	return s
}

// Name is the session's name in the kernel: the name it was opened with,
// or for a user's session the key made of user and name (see
// backend.SessionKey). Kernel.Session and Kernel.Call accept it back.
func (s *Session) Name() string { return s.spec.Session }

// User is the user the session was opened for ("" if none).
func (s *Session) User() string { return s.spec.User }

// Shell returns the session's guarded shell.
func (s *Session) Shell() backend.Shell { return s.shell }

// FS returns the session's guarded filesystem.
func (s *Session) FS() backend.Filesystem { return s.fs }

// Lifecycle returns the guarded control of the workspace's sandbox (a
// container that can be started and stopped). Start and Stop pass the
// policy chain (lifecycle.start, lifecycle.stop); on a workspace with
// nothing to start they fail with ErrUnavailable.
func (s *Session) Lifecycle() backend.Lifecycle { return s.lc }

// toolEnabled reports whether the session may call tool.
func (s *Session) toolEnabled(tool string) bool { return s.tools == nil || s.tools[tool] }

// Sandboxed reports whether the session runs sandboxed; false before the
// workspace is opened is not a claim either way, so it opens it.
func (s *Session) Sandboxed(ctx context.Context) (bool, error) {
	_, fellBack, err := s.workspace(ctx)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !fellBack && s.info.Sandboxed, nil
}

// sandboxedOr reports whether the session's open workspace is sandboxed,
// or def when it has not been opened.
func (s *Session) sandboxedOr(def bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ws == nil {
		return def
	}
	return !s.fellBack && s.info.Sandboxed
}

// Close ends the session: its workspace is closed (and removed unless the
// session was opened with Keep) and the session is forgotten. Calling it
// again does nothing.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for s.opening != nil { // let a concurrent open finish, then close what it opened
		ch := s.opening
		s.mu.Unlock()
		<-ch
		s.mu.Lock()
	}
	ws := s.ws
	s.ws = nil
	s.mu.Unlock()

	s.k.forget(s)
	s.plugins.Close()
	rerr := s.saveReads()
	s.destroyContainers(ctx)
	var err error
	if ws != nil {
		err = ws.Close(ctx)
	}
	if rerr != nil {
		// Not the caller's failure: the session is closed all the same,
		// and a lost record only means a re-read before the next edit.
		s.k.log.LogAttrs(ctx, slog.LevelWarn, "session.reads_not_saved", slog.String("session", s.spec.Session),
			slog.String("error", rerr.Error()))
	}
	s.k.log.LogAttrs(ctx, slog.LevelDebug, "session.closed", slog.String("session", s.spec.Session), slog.Bool("keep", s.spec.Keep))
	return err
}

func (s *Session) touch()              { s.last.Store(time.Now().UnixNano()) }
func (s *Session) lastUsed() time.Time { return time.Unix(0, s.last.Load()) }

// idleFor is how long the session has been unused; a running call keeps it
// busy however long it takes.
func (s *Session) idleFor(now time.Time) time.Duration {
	if s.inflight.Load() > 0 {
		return 0
	}
	return now.Sub(s.lastUsed())
}

// begin marks a capability call as running; done marks it finished.
func (s *Session) begin() (done func(), err error) {
	s.idleMu.RLock() // wait out a release of the workspace's resources
	s.inflight.Add(1)
	s.idleMu.RUnlock()
	s.touch()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		s.inflight.Add(-1)
		return nil, s.errClosed()
	}
	return func() { s.touch(); s.inflight.Add(-1) }, nil
}

func (s *Session) errClosed() error {
	return backend.Errorf(backend.ErrUnavailable, "session", s.spec.Session, "the session is closed: open it again with Kernel.Session")
}

// workspace returns the session's workspace, opening it on first use.
// Concurrent first uses open it once; a failed open is retried next time.
func (s *Session) workspace(ctx context.Context) (backend.Workspace, bool, error) {
	for {
		s.mu.Lock()
		switch {
		case s.closed:
			s.mu.Unlock()
			return nil, false, s.errClosed()
		case s.ws != nil:
			ws, fb := s.ws, s.fellBack
			s.mu.Unlock()
			return ws, fb, nil
		case s.opening != nil:
			ch := s.opening
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, false, backend.Errorf(backend.ErrUnavailable, "session", s.spec.Session, "gave up waiting for the workspace to open: %v", ctx.Err())
			}
		}
		ch := make(chan struct{})
		s.opening = ch
		s.mu.Unlock()

		start := time.Now()
		ws, fb, err := s.k.openWorkspace(ctx, s.spec)
		var info backend.Info
		if err == nil {
			if info, err = ws.Shell().Info(ctx); err != nil {
				_ = ws.Close(context.WithoutCancel(ctx))
			}
		}

		s.mu.Lock()
		s.opening = nil
		close(ch)
		if err != nil {
			s.mu.Unlock()
			return nil, false, err
		}
		if s.closed { // closed while opening: do not leak what we opened
			s.mu.Unlock()
			_ = ws.Close(context.WithoutCancel(ctx))
			return nil, false, s.errClosed()
		}
		s.ws, s.fellBack, s.info = ws, fb, info
		s.mu.Unlock()
		s.k.log.LogAttrs(ctx, slog.LevelInfo, "session.workspace_opened",
			slog.String("session", s.spec.Session), slog.String("backend", info.Backend),
			slog.Bool("sandboxed", info.Sandboxed && !fb), slog.Bool("fallback", fb),
			slog.Duration("duration", time.Since(start)))
		return ws, fb, nil
	}
}
