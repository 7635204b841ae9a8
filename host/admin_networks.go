package host

import (
	"context"
	"slices"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// Agent-made networks in wai ps and wai rm, as managed containers are
// (admin_containers.go): each is an entry named NetworkEntryPrefix + its
// name, KEEP saying whether it is persistent, STATE "internal" or
// "egress", HELD BY the holder of the session that made it; wai rm of
// that name removes it when no container uses it and that session is not
// held.

// NetworkEntryPrefix starts the wai ps name of a managed network.
const NetworkEntryPrefix = "network/"

// listManagedNetworks adds the managed networks in scope of backend b.
func listManagedNetworks(ctx context.Context, name string, b backend.Backend, scope AdminScope) ([]SessionEntry, error) {
	l, ok := b.(backend.ManagedNetworkLister)
	if !ok {
		return nil, nil
	}
	infos, err := l.ListManagedNetworks(ctx)
	return managedEntries(infos, scope, holderOf(b), func(n backend.NetworkInfo) (string, string, SessionEntry) {
		state := "egress"
		if n.Internal {
			state = "internal"
		}
		return n.User, n.Session, SessionEntry{Name: NetworkEntryPrefix + n.Name, SessionInfo: backend.SessionInfo{
			Backend: name, Created: n.Created, Size: -1, Keep: n.Persistent, State: state}}
	}), err
}

// removeManagedNetwork removes the managed network of scope.User named by
// a wai ps entry name, unless its session is held (refuseHeld).
func (k *Kernel) removeManagedNetwork(ctx context.Context, scope AdminScope, entry string) (SessionEntry, error) {
	name := strings.TrimPrefix(entry, NetworkEntryPrefix)
	const what = "managed network"
	return k.removeManaged(ctx, scope, entry, what, func(bname string, b backend.Backend) (SessionEntry, bool, error) {
		n, ok := b.(backend.ContainerNetworks)
		if !ok {
			return SessionEntry{}, false, nil
		}
		owner := backend.ContainerOwner{User: scope.User}
		ls, err := n.ListNetworks(ctx, owner)
		if err != nil {
			return SessionEntry{}, true, err
		}
		var info backend.NetworkInfo
		if i := slices.IndexFunc(ls, func(l backend.NetworkInfo) bool { return l.Name == name }); i >= 0 {
			info = ls[i]
		}
		// One not listed is left to DestroyNetwork to call not found.
		if err = refuseHeld(b, entry, what, info.Session); err == nil {
			info, err = n.DestroyNetwork(ctx, backend.ContainerRef{Owner: owner, Name: name})
		}
		return managedEntry(scope, entry, info.Session, backend.SessionInfo{Backend: bname, Keep: info.Persistent}), true, err
	})
}
