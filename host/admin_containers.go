package host

import (
	"context"
	"errors"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// Agent-managed containers in wai ps and wai rm: each is listed as an
// entry named ContainerEntryPrefix + its name (no session name has a
// "/"), KEEP saying whether it is persistent, HELD BY the process holding
// the session that made it; wai rm of that name destroys it, unless that
// process still runs (refuseHeld). wai gc sweeps them through the
// backends' GarbageCollector, by the same rule.

// ContainerEntryPrefix starts the wai ps name of a managed container.
const ContainerEntryPrefix = "container/"

// listManagedContainers adds the managed containers in scope of backend b.
func listManagedContainers(ctx context.Context, name string, b backend.Backend, scope AdminScope) ([]SessionEntry, error) {
	l, ok := b.(backend.ManagedContainerLister)
	if !ok {
		return nil, nil
	}
	infos, err := l.ListManagedContainers(ctx)
	return managedEntries(infos, scope, holderOf(b), func(c backend.ContainerInfo) (string, string, SessionEntry) {
		return c.User, c.Session, SessionEntry{Name: ContainerEntryPrefix + c.Name, SessionInfo: backend.SessionInfo{
			Backend: name, Created: c.Created, Size: -1, Keep: c.Persistent, Container: c.Name, State: c.State}}
	}), err
}

// managedListers list, for wai ps, what each backend manages for agents
// beside its sessions, in this order.
var managedListers = []func(ctx context.Context, name string, b backend.Backend, scope AdminScope) ([]SessionEntry, error){
	listManagedContainers, listManagedSnapshots, listManagedNetworks,
}

// managedEntries lists what a backend manages for agents beside its
// sessions (containers, snapshots, networks) as wai ps entries: those of
// scope's users, each with its user, the session that made it and that
// session's holder (holder, by session key). entry gives an info's user,
// session key and entry.
func managedEntries[T any](infos []T, scope AdminScope, holder func(key string) string, entry func(T) (user, sessionKey string, e SessionEntry)) []SessionEntry {
	var out []SessionEntry
	for _, info := range infos {
		user, key, e := entry(info)
		if !scope.AllUsers && user != scope.User {
			continue
		}
		e.User = user
		_, e.Session, _ = backend.SplitSessionKey(key)
		e.Holder = holder(key)
		out = append(out, e)
	}
	return out
}

// holderOf looks up, by session key, the live process holding a session
// of backend b (backend.SessionHolderReporter), asking once per session.
// A backend that records no holders holds nothing.
func holderOf(b backend.Backend) func(key string) string {
	r, ok := b.(backend.SessionHolderReporter)
	if !ok {
		return func(string) string { return "" }
	}
	seen := map[string]string{}
	return func(key string) string {
		if key == "" {
			return ""
		}
		h, ok := seen[key]
		if !ok {
			h = r.SessionHolder(key)
			seen[key] = h
		}
		return h
	}
}

// refuseHeld is wai rm's refusal (ErrPermission) of what a session made
// (what, named by entry) while a live process holds that session (key):
// the agent there may be using it, and removing it under a live agent is
// the loss wai rm never causes for the session itself. nil when no live
// process holds the session, persistent or not, as wai gc --all decides.
func refuseHeld(b backend.Backend, entry, what, key string) error {
	h := holderOf(b)(key)
	if h == "" {
		return nil
	}
	_, name, _ := backend.SplitSessionKey(key)
	return backend.Errorf(backend.ErrPermission, "rm", entry,
		"the %s belongs to session %s, in use by %s: wai never removes what a session a running process holds made; "+
			"end the session there (close the client, or stop that process) and run wai rm again", what, name, h)
}

// removeManagedContainer destroys the managed container of scope.User
// named by a wai ps entry name, unless its session is held (refuseHeld).
func (k *Kernel) removeManagedContainer(ctx context.Context, scope AdminScope, entry string) (SessionEntry, error) {
	name := strings.TrimPrefix(entry, ContainerEntryPrefix)
	const what = "managed container"
	return k.removeManaged(ctx, scope, entry, what, func(bname string, b backend.Backend) (SessionEntry, bool, error) {
		c, ok := b.(backend.Containers)
		if !ok {
			return SessionEntry{}, false, nil
		}
		ref := backend.ContainerRef{Owner: backend.ContainerOwner{User: scope.User}, Name: name}
		info, err := c.ContainerStatus(ctx, ref, false)
		if err == nil {
			err = refuseHeld(b, entry, what, info.Session)
		}
		if err == nil {
			info, err = c.DestroyContainer(ctx, ref, true)
		}
		return managedEntry(scope, entry, info.Session, backend.SessionInfo{Backend: bname, Container: info.Name, Keep: info.Persistent}), true, err
	})
}

// managedEntry is the entry wai rm reports for what it removed (or
// refused to): scope's user, the session that made it, and si.
func managedEntry(scope AdminScope, entry, sessionKey string, si backend.SessionInfo) SessionEntry {
	_, si.Session, _ = backend.SplitSessionKey(sessionKey)
	return SessionEntry{User: scope.User, Name: entry, SessionInfo: si}
}

// removeManaged removes what a wai ps entry other than a session names
// (a container, network or snapshot of scope.User): remove is tried on
// each admin backend until one has it (ok, and an error other than
// ErrNotFound). None having it is ErrNotFound naming what, with the
// backends that could not be asked.
func (k *Kernel) removeManaged(ctx context.Context, scope AdminScope, entry, what string,
	remove func(bname string, b backend.Backend) (e SessionEntry, ok bool, err error)) (SessionEntry, error) {
	var (
		errs  []error
		e     SessionEntry
		err   error
		found bool
	)
	k.eachAdminBackend(ctx, &errs, func(bname string, b backend.Backend) bool {
		re, ok, rerr := remove(bname, b)
		if !ok || errors.Is(rerr, backend.ErrNotFound) {
			return false
		}
		e, err, found = re, rerr, true
		return true
	})
	if found {
		return e, err
	}
	err = backend.Errorf(backend.ErrNotFound, "rm", entry, "no %s of this user has this name (wai ps lists them)", what)
	if len(errs) > 0 {
		err = errors.Join(err, errors.Join(errs...))
	}
	return SessionEntry{}, err
}
