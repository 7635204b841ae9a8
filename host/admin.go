package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// Session management across backends (wai ps, wai rm, wai gc). Each
// backend that keeps sessions implements the optional interfaces of
// host/backend; the kernel asks every backend the configuration may have
// used, and keeps users apart: a user sees and touches only their own
// sessions.

// SessionEntry is one session as a backend keeps it, with its user and its
// own name (the backend knows a user's session by a key: see
// backend.SessionKey).
type SessionEntry struct {
	backend.SessionInfo
	User string `json:"user,omitempty"`
	Name string `json:"name"`
}

// AdminScope selects whose sessions an admin call sees.
type AdminScope struct {
	// User is whose sessions; "" is the sessions opened without a user.
	User string
	// AllUsers sees every user's sessions (ListSessions and
	// CollectGarbage only; removal is always by one user's name).
	AllUsers bool
}

func (sc AdminScope) check() error {
	if sc.User == "" {
		return nil
	}
	return backend.ValidUser(sc.User)
}

// sees reports whether a session key is in scope, and splits it.
func (sc AdminScope) sees(key string) (user, name string, ok bool) {
	user, name, ok = backend.SplitSessionKey(key)
	return user, name, ok && (sc.AllUsers || user == sc.User)
}

// BackendError is one backend's failure in an admin call that went on with
// the other backends.
type BackendError struct {
	Backend string
	Err     error
}

func (e *BackendError) Error() string { return fmt.Sprintf("backend %s: %v", e.Backend, e.Err) }
func (e *BackendError) Unwrap() error { return e.Err }

// adminBackends names the backends whose sessions the configuration may
// have made: the backend, the fallback, every one with a [backends.*]
// table, and host (its sessions cost nothing to look for). With
// WithBackend, only that one.
func (k *Kernel) adminBackends() []string {
	if k.injected != nil {
		return []string{""}
	}
	names := []string{k.cfg.Backend, k.cfg.Fallback, "host"}
	for n := range k.cfg.Backends {
		names = append(names, n)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == "" })
	sort.Strings(names)
	return slices.Compact(names)
}

// eachAdminBackend calls fn with each of adminBackends, in order, until
// fn says it is done. A backend that cannot be opened (Podman not
// running) is added to *errs as a BackendError, in its place among the
// errors fn adds, for the caller to report beside what the others
// answered.
func (k *Kernel) eachAdminBackend(ctx context.Context, errs *[]error, fn func(name string, b backend.Backend) (done bool)) {
	for _, name := range k.adminBackends() {
		b := k.injected
		if name != "" {
			var err error
			if b, err = k.backend(ctx, name); err != nil {
				*errs = append(*errs, &BackendError{name, err})
				continue
			}
		}
		if fn(name, b) {
			return
		}
	}
}

// ListSessions lists the sessions in scope on every backend, sorted by
// backend, user and name. A backend that cannot answer (Podman not
// running) is reported in errs; the others are listed all the same.
func (k *Kernel) ListSessions(ctx context.Context, scope AdminScope) (out []SessionEntry, errs []error) {
	if err := scope.check(); err != nil {
		return nil, []error{err}
	}
	k.eachAdminBackend(ctx, &errs, func(name string, b backend.Backend) bool {
		l, ok := b.(backend.SessionLister)
		if !ok {
			return false
		}
		infos, err := l.ListSessions(ctx)
		if err != nil {
			errs = append(errs, &BackendError{name, err})
		}
		for _, si := range infos {
			if user, own, ok := scope.sees(si.Session); ok {
				out = append(out, SessionEntry{SessionInfo: si, User: user, Name: own})
			}
		}
		for _, list := range managedListers {
			es, err := list(ctx, name, b, scope)
			if err != nil {
				errs = append(errs, &BackendError{name, err})
			}
			out = append(out, es...)
		}
		return false
	})
	slices.SortStableFunc(out, func(a, b SessionEntry) int {
		return cmp.Or(cmp.Compare(a.Backend, b.Backend), cmp.Compare(a.User, b.User), cmp.Compare(a.Name, b.Name))
	})
	return out, errs
}

// RemoveSession removes the named session of scope.User from whichever
// backend has it (files, container, records). It never touches a session
// a live process holds (ErrPermission naming it); a name no backend knows
// is ErrNotFound.
func (k *Kernel) RemoveSession(ctx context.Context, scope AdminScope, name string) (SessionEntry, error) {
	if err := scope.check(); err != nil {
		return SessionEntry{}, err
	}
	if strings.HasPrefix(name, ContainerEntryPrefix) {
		return k.removeManagedContainer(ctx, scope, name)
	}
	if strings.HasPrefix(name, SnapshotEntryPrefix) {
		return k.removeManagedSnapshot(ctx, scope, name)
	}
	if strings.HasPrefix(name, NetworkEntryPrefix) {
		return k.removeManagedNetwork(ctx, scope, name)
	}
	key, err := sessionKey(name, scope.User)
	if err == nil {
		err = backend.WorkspaceSpec{Session: key}.Validate()
	}
	if err != nil {
		return SessionEntry{}, err
	}
	entry := SessionEntry{User: scope.User, Name: name}
	var errs []error
	found := false
	k.eachAdminBackend(ctx, &errs, func(bname string, b backend.Backend) bool {
		r, ok := b.(backend.SessionRemover)
		if !ok {
			return false
		}
		si, rerr := r.RemoveSession(ctx, key)
		if errors.Is(rerr, backend.ErrNotFound) {
			return false
		}
		entry.SessionInfo, err, found = si, rerr, true
		if err == nil {
			k.forgetReads(bname, key)
		}
		return true
	})
	if found {
		return entry, err
	}
	who := "without a user"
	if scope.User != "" {
		who = fmt.Sprintf("of user %q", scope.User)
	}
	err = backend.Errorf(backend.ErrNotFound, "rm", name, "no session %s has this name (wai ps lists them)", who)
	if len(errs) > 0 {
		// A backend that could not be asked may hold it: say so.
		err = fmt.Errorf("%w; and %w", err, errors.Join(errs...))
	}
	return entry, err
}

// GCResult is one backend's sweep.
type GCResult struct {
	Backend string
	backend.GCReport
}

// CollectGarbage sweeps every backend of the sessions in scope that no
// live process holds: what dead processes left, and kept sessions past
// their kept lifetime (every kept one with all).
func (k *Kernel) CollectGarbage(ctx context.Context, scope AdminScope, all bool) (out []GCResult, errs []error) {
	if err := scope.check(); err != nil {
		return nil, []error{err}
	}
	opts := backend.GCOptions{All: all, Match: func(key string) bool { _, _, ok := scope.sees(key); return ok }}
	k.eachAdminBackend(ctx, &errs, func(name string, b backend.Backend) bool {
		g, ok := b.(backend.GarbageCollector)
		if !ok {
			return false
		}
		rep, err := g.CollectGarbage(ctx, opts)
		if err != nil {
			errs = append(errs, &BackendError{name, err})
		}
		for _, e := range rep.Errors {
			errs = append(errs, &BackendError{name, e})
		}
		for _, it := range rep.Removed {
			k.forgetReads(name, it.Session)
		}
		out = append(out, GCResult{Backend: name, GCReport: rep})
		return false
	})
	return out, errs
}

// forgetReads removes the read record (read_before_write) of a session
// removed from backend bname, as Session.readsPath names it: a later
// session of the same name starts with no reads.
func (k *Kernel) forgetReads(bname, key string) {
	user, _, ok := backend.SplitSessionKey(key)
	if !ok || bname == "" {
		return
	}
	if user == "" {
		user = "_"
	}
	_ = os.Remove(filepath.Join(k.stateDir, "reads", bname, user, key+".json"))
}
