package host

import (
	"context"
	"errors"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// Agent-managed containers in wai ps and wai rm: each is listed as an
// entry named ContainerEntryPrefix + its name (no session name has a
// "/"), KEEP saying whether it is persistent; wai rm of that name
// destroys it. wai gc sweeps them through the backends' GarbageCollector.

// ContainerEntryPrefix starts the wai ps name of a managed container.
const ContainerEntryPrefix = "container/"

// listManagedContainers adds the managed containers in scope of backend b.
func listManagedContainers(ctx context.Context, name string, b backend.Backend, scope AdminScope) ([]SessionEntry, error) {
	l, ok := b.(backend.ManagedContainerLister)
	if !ok {
		return nil, nil
	}
	infos, err := l.ListManagedContainers(ctx)
	return managedEntries(infos, scope, func(c backend.ContainerInfo) (string, string, SessionEntry) {
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
// scope's users, each with its user and the session that made it. entry
// gives an info's user, session key and entry.
func managedEntries[T any](infos []T, scope AdminScope, entry func(T) (user, sessionKey string, e SessionEntry)) []SessionEntry {
	var out []SessionEntry
	for _, info := range infos {
		user, key, e := entry(info)
		if !scope.AllUsers && user != scope.User {
			continue
		}
		e.User = user
		_, e.Session, _ = backend.SplitSessionKey(key)
		out = append(out, e)
	}
	return out
}

// removeManagedContainer destroys the managed container of scope.User
// named by a wai ps entry name.
func (k *Kernel) removeManagedContainer(ctx context.Context, scope AdminScope, entry string) (SessionEntry, error) {
	name := strings.TrimPrefix(entry, ContainerEntryPrefix)
	return k.removeManaged(ctx, scope, entry, "managed container", func(bname string, b backend.Backend) (SessionEntry, bool, error) {
		c, ok := b.(backend.Containers)
		if !ok {
			return SessionEntry{}, false, nil
		}
		info, err := c.DestroyContainer(ctx, backend.ContainerRef{Owner: backend.ContainerOwner{User: scope.User}, Name: name}, true)
		return SessionEntry{User: scope.User, Name: entry, SessionInfo: backend.SessionInfo{Backend: bname, Container: info.Name, Keep: info.Persistent}}, true, err
	})
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
