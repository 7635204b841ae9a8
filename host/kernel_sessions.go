package host

import (
	"context"
	"log/slog"

	"github.com/wai-dev/wai/host/backend"
)

// The kernel's table of open sessions, by key.

// SessionOptions shape a new session; they are ignored when the session
// already exists.
type SessionOptions struct {
	// User owns the session (default: the kernel's WithUser, else none).
	// Users are kept apart: the session "proj" of alice and that of bob
	// are two sessions with their own files, and neither can reach the
	// other's. Backends with per-user roots use it in their paths.
	User string
	// Keep leaves the workspace's files (and container) behind on Close,
	// for a later session of the same name.
	Keep bool
	// Tools, when not nil, are the only tools Call runs for the session.
	Tools []string
	// Approver asks a person when a policy answers ask; nil treats ask
	// as deny (with the policy's reason and the config key that would
	// allow the action).
	Approver Approver
}

// Session returns the named session of opts.User, creating it if needed.
// An empty name creates a throwaway session with a fresh random name.
// Creating a session is cheap: its workspace opens on first use.
//
// A user's session is known to the kernel and its backend by a key that
// includes the user (backend.SessionKey); Session.Name returns it, and
// Session (and Call) accept it back for a session this kernel has open.
func (k *Kernel) Session(ctx context.Context, name string, opts SessionOptions) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if name == "" {
		name = "tmp-" + randomHex(6)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, errKernelClosed()
	}
	if s, ok := k.sessions[name]; ok && opts.User == "" && backend.IsUserKey(name) {
		s.touch() // a key Session.Name handed out
		return s, nil
	}
	user := opts.User
	if user == "" {
		user = k.user
	}
	key, err := sessionKey(name, user)
	if err != nil {
		return nil, err
	}
	spec := backend.WorkspaceSpec{Session: key, User: user, Keep: opts.Keep}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if s, ok := k.sessions[key]; ok {
		s.touch()
		return s, nil
	}
	s := newSession(k, spec, opts.Tools)
	s.approver = opts.Approver
	s.loadReads(ctx)
	k.sessions[key] = s
	k.log.LogAttrs(ctx, slog.LevelDebug, "session.created", slog.String("session", key), slog.String("user", user), slog.Bool("keep", opts.Keep))
	return s, nil
}

// Sessions lists the names of the open sessions.
func (k *Kernel) Sessions() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	names := make([]string, 0, len(k.sessions))
	for n := range k.sessions {
		names = append(names, n)
	}
	return names
}

// forget drops a closed session from the table.
func (k *Kernel) forget(s *Session) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.sessions[s.spec.Session] == s {
		delete(k.sessions, s.spec.Session)
	}
}
