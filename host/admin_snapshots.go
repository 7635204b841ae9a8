package host

import (
	"context"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// Snapshots of managed containers in wai ps and wai rm: each is listed as
// an entry named SnapshotEntryPrefix + its name, kept (they outlive every
// session: wai gc never removes one); wai rm of that name deletes it.

// SnapshotEntryPrefix starts the wai ps name of a snapshot.
const SnapshotEntryPrefix = "snapshot/"

// listManagedSnapshots adds the snapshots in scope of backend b.
func listManagedSnapshots(ctx context.Context, name string, b backend.Backend, scope AdminScope) ([]SessionEntry, error) {
	l, ok := b.(backend.ManagedSnapshotLister)
	if !ok {
		return nil, nil
	}
	infos, err := l.ListManagedSnapshots(ctx)
	return managedEntries(infos, scope, func(s backend.SnapshotInfo) (string, string, SessionEntry) {
		return s.User, s.Session, SessionEntry{Name: SnapshotEntryPrefix + s.Name, SessionInfo: backend.SessionInfo{
			Backend: name, Created: s.Created, Size: s.Size, Keep: true, Container: s.Image, State: "snapshot"}}
	}), err
}

// removeManagedSnapshot deletes the snapshot of scope.User named by a wai
// ps entry name.
func (k *Kernel) removeManagedSnapshot(ctx context.Context, scope AdminScope, entry string) (SessionEntry, error) {
	name := strings.TrimPrefix(entry, SnapshotEntryPrefix)
	return k.removeManaged(ctx, scope, entry, "snapshot", func(bname string, b backend.Backend) (SessionEntry, bool, error) {
		sn, ok := b.(backend.ContainerSnapshots)
		if !ok {
			return SessionEntry{}, false, nil
		}
		info, err := sn.DeleteSnapshot(ctx, backend.ContainerOwner{User: scope.User}, name)
		return SessionEntry{User: scope.User, Name: entry, SessionInfo: backend.SessionInfo{Backend: bname, Container: info.Image, Keep: true, State: "snapshot"}}, true, err
	})
}
