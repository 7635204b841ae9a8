package backend

import (
	"context"
	"time"
)

// The interfaces below are optional: a backend implements the ones that
// make sense for it, and callers (wai ps, wai rm, wai gc, the kernel's
// idle reaper) find them with a type assertion, the way net/http finds
// http.Flusher. A backend without them simply has nothing to list, remove
// or release.

// SessionLister is implemented by backends that can list the sessions they
// keep: open in some process, or kept on disk for a later one.
type SessionLister interface {
	// ListSessions returns every session the backend knows of, sorted by
	// session name, whichever process or user opened it. Callers filter
	// by user (see SplitSessionKey).
	ListSessions(ctx context.Context) ([]SessionInfo, error)
}

// SessionRemover is implemented by backends that can remove one session's
// workspace (files, container, records) from any process.
type SessionRemover interface {
	// RemoveSession removes the workspace of the named session (the name
	// the backend was given in WorkspaceSpec.Session). It never touches a
	// session a live process holds: that is ErrPermission, naming the
	// holder. An unknown session is ErrNotFound.
	RemoveSession(ctx context.Context, session string) (SessionInfo, error)
}

// GarbageCollector is implemented by backends that can sweep what crashed
// or abandoned sessions left behind.
type GarbageCollector interface {
	// CollectGarbage removes the workspaces of sessions no live process
	// holds: those a dead process left behind, and kept ones whose kept
	// lifetime expired (or every kept one, with GCOptions.All). Only
	// sessions GCOptions.Match accepts are considered.
	CollectGarbage(ctx context.Context, opts GCOptions) (GCReport, error)
}

// SessionHolderReporter is implemented by backends that record which
// process holds a session. wai ps and wai rm ask it about what a session
// made beside its workspace (managed containers, networks, snapshots):
// that is in use while its session is, and is shown and kept as held.
type SessionHolderReporter interface {
	// SessionHolder describes the live process holding the named session
	// (the name WorkspaceSpec.Session gave), as SessionInfo.Holder does;
	// "" when none does (ended, crashed, or never known here).
	SessionHolder(session string) string
}

// IdleReleaser is implemented by workspaces that hold resources worth
// giving back while the session is idle (a running container). Releasing
// keeps the session's files and identity; the next use recreates what was
// released. The kernel's idle reaper calls it; without it the reaper leaves
// the workspace as it is.
type IdleReleaser interface {
	ReleaseIdle(ctx context.Context) error
}

// SessionInfo describes one session as a backend keeps it.
type SessionInfo struct {
	Backend string `json:"backend"`
	// Session is the name the backend was given (WorkspaceSpec.Session):
	// for a user's session, the key SessionKey made.
	Session string `json:"session"`
	// Created is when the session was first opened; LastUsed when a
	// command or a process last used it (zero when unknown).
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used"`
	// Size is the bytes its workspace takes on disk; -1 when unknown.
	Size int64 `json:"size"`
	// Holder describes the live process holding the session ("" when
	// none: a kept session waiting for reuse, or a crash's leftover).
	Holder string `json:"holder,omitempty"`
	Keep   bool   `json:"keep"`
	// Workspace is the host directory with the session's files.
	Workspace string `json:"workspace,omitempty"`
	// Container and State describe the session's sandbox, when it has one
	// ("" when there is none now: it is created on the next use).
	Container string `json:"container,omitempty"`
	State     string `json:"state,omitempty"`
}

// GCOptions select what CollectGarbage removes.
type GCOptions struct {
	// All also removes kept sessions however recently they were used
	// (never one a live process holds).
	All bool
	// Match, when not nil, limits the sweep to the sessions it accepts
	// (by the name the backend was given). Anything that does not belong
	// to a session (a stray directory) is swept only when Match accepts
	// its name too.
	Match func(session string) bool
}

// Matches reports whether o selects the session.
func (o GCOptions) Matches(session string) bool { return o.Match == nil || o.Match(session) }

// GCItem is one thing CollectGarbage removed or left alone.
type GCItem struct {
	Kind    string `json:"kind"` // "container" or "workspace"
	Name    string `json:"name"` // container name, or workspace directory
	Session string `json:"session"`
	Reason  string `json:"reason"` // why it was (or was not) removed
}

// GCReport lists what CollectGarbage did.
type GCReport struct {
	Removed []GCItem `json:"removed"`
	Kept    []GCItem `json:"kept"`
	// Errors are removals that failed; the rest went ahead.
	Errors []error `json:"-"`
}

// ManagedContainerLister is implemented by backends with Containers, for
// wai ps: every user's managed containers (the kernel filters by user).
// Persistent ones outlive their session and are listed until removed.
type ManagedContainerLister interface {
	ListManagedContainers(ctx context.Context) ([]ContainerInfo, error)
}
