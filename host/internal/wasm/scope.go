package wasm

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/wai-dev/wai/host/backend"
)

// ErrSessionBusy is the error of a tool call that waited until its
// deadline for one of its session's other calls to finish
// (Options.SessionConcurrentCalls). The error also matches the context's
// own error.
var ErrSessionBusy = errors.New("session has too many tool calls running")

// Scope holds the plugin instances of one session. An instance created
// for a scope serves that scope's calls only, one at a time, and is
// thrown away with it: what a plugin keeps in its globals never reaches
// another session. A scope also caps how many tool calls its session runs
// at once, so one session cannot take every instance the runtime can
// afford while others wait.
//
// Compiled modules are shared by every scope (they hold no state), so a
// scope's first call of a plugin pays instantiation only.
type Scope struct {
	rt    *Runtime
	name  string
	calls chan struct{} // a token per tool call running

	mu     sync.Mutex
	pools  map[*Plugin]*pool
	closed bool
}

// NewScope returns an empty scope for the session called name (used in
// messages). Close it when the session ends.
func (r *Runtime) NewScope(name string) *Scope {
	return &Scope{rt: r, name: name, calls: make(chan struct{}, r.opts.SessionConcurrentCalls), pools: map[*Plugin]*pool{}}
}

// Close discards the scope's instances: idle ones now, busy ones when
// their call returns. Later calls in the scope fail with ErrUnavailable.
// Closing a nil or closed scope does nothing.
func (s *Scope) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	pools := s.pools
	s.pools = nil
	s.mu.Unlock()
	for _, pl := range pools {
		pl.shutdown()
	}
}

// poolFor returns the scope's pool of p's instances, creating it.
func (s *Scope) poolFor(p *Plugin, op string) (*pool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errorf(p.name, op, backend.ErrUnavailable, "session %s is closed and its plugin instances discarded: open the session again", s.name)
	}
	if pl, ok := s.pools[p]; ok {
		return pl, nil
	}
	pl := newPool(p, "session "+s.name, cap(s.calls))
	if !s.rt.addPool(pl) {
		return nil, errPoolClosed
	}
	s.pools[p] = pl
	return pl, nil
}

// enter waits for one of the session's call slots until ctx is done; the
// returned leave gives it back.
func (s *Scope) enter(ctx context.Context, plugin, op string) (leave func(), err error) {
	select {
	case s.calls <- struct{}{}:
	default:
		select {
		case s.calls <- struct{}{}:
		case <-ctx.Done():
			// ErrInvalid: the session broke a limit (too many calls at
			// once); the backend is fine, so "unavailable" would mislead.
			return nil, &Error{Plugin: plugin, Op: op, Kind: backend.ErrInvalid, Cause: busyError{ctx.Err()},
				Msg: fmt.Sprintf("session %s already runs %d tool calls, the most limits.session_concurrent_calls allows; this call waited for one of them to finish until its deadline",
					s.name, cap(s.calls))}
		}
	}
	return func() { <-s.calls }, nil
}

// busyError matches ErrSessionBusy and the context's error.
type busyError struct{ ctxErr error }

func (b busyError) Error() string   { return "waited for a call slot: " + b.ctxErr.Error() }
func (b busyError) Unwrap() []error { return []error{ErrSessionBusy, b.ctxErr} }

type scopeKey struct{}

// withScope makes the policy checks a tool call causes (through its host
// functions, whose context descends from the call's) run on the session's
// instances too.
func withScope(ctx context.Context, s *Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

func scopeFrom(ctx context.Context) *Scope {
	s, _ := ctx.Value(scopeKey{}).(*Scope)
	return s
}
