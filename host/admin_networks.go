package host

import (
	"context"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// Agent-made networks in wai ps and wai rm, as managed containers are
// (admin_containers.go): each is an entry named NetworkEntryPrefix + its
// name, KEEP saying whether it is persistent, STATE "internal" or
// "egress"; wai rm of that name removes it when no container uses it.

// NetworkEntryPrefix starts the wai ps name of a managed network.
const NetworkEntryPrefix = "network/"

// listManagedNetworks adds the managed networks in scope of backend b.
func listManagedNetworks(ctx context.Context, name string, b backend.Backend, scope AdminScope) ([]SessionEntry, error) {
	l, ok := b.(backend.ManagedNetworkLister)
	if !ok {
		return nil, nil
	}
	infos, err := l.ListManagedNetworks(ctx)
	return managedEntries(infos, scope, func(n backend.NetworkInfo) (string, string, SessionEntry) {
		state := "egress"
		if n.Internal {
			state = "internal"
		}
		return n.User, n.Session, SessionEntry{Name: NetworkEntryPrefix + n.Name, SessionInfo: backend.SessionInfo{
			Backend: name, Created: n.Created, Size: -1, Keep: n.Persistent, State: state}}
	}), err
}

// removeManagedNetwork removes the managed network of scope.User named by
// a wai ps entry name.
func (k *Kernel) removeManagedNetwork(ctx context.Context, scope AdminScope, entry string) (SessionEntry, error) {
	name := strings.TrimPrefix(entry, NetworkEntryPrefix)
	return k.removeManaged(ctx, scope, entry, "managed network", func(bname string, b backend.Backend) (SessionEntry, bool, error) {
		n, ok := b.(backend.ContainerNetworks)
		if !ok {
			return SessionEntry{}, false, nil
		}
		info, err := n.DestroyNetwork(ctx, backend.ContainerRef{Owner: backend.ContainerOwner{User: scope.User}, Name: name})
		return SessionEntry{User: scope.User, Name: entry, SessionInfo: backend.SessionInfo{Backend: bname, Keep: info.Persistent}}, true, err
	})
}
