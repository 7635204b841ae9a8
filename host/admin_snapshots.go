package host

import (
	"context"
	"slices"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// Snapshots of managed containers in wai ps and wai rm: each is listed as
// an entry named SnapshotEntryPrefix + its name, kept (they outlive every
// session: wai gc never removes one), HELD BY the holder of the session
// that took it; wai rm of that name deletes it once that session is not
// held.

// SnapshotEntryPrefix starts the wai ps name of a snapshot.
const SnapshotEntryPrefix = "snapshot/"

// listManagedSnapshots adds the snapshots in scope of backend b.
func listManagedSnapshots(ctx context.Context, name string, b backend.Backend, scope AdminScope) ([]SessionEntry, error) {
	l, ok := b.(backend.ManagedSnapshotLister)
	if !ok {
		return nil, nil
	}
	infos, err := l.ListManagedSnapshots(ctx)
	return managedEntries(infos, scope, holderOf(b), func(s backend.SnapshotInfo) (string, string, SessionEntry) {
		return s.User, s.Session, SessionEntry{Name: SnapshotEntryPrefix + s.Name, SessionInfo: backend.SessionInfo{
			Backend: name, Created: s.Created, Size: s.Size, Keep: true, Container: s.Image, State: "snapshot"}}
	}), err
}

// removeManagedSnapshot deletes the snapshot of scope.User named by a wai
// ps entry name, unless the session that took it is held (refuseHeld):
// its agent may restore it next.
func (k *Kernel) removeManagedSnapshot(ctx context.Context, scope AdminScope, entry string) (SessionEntry, error) {
	name := strings.TrimPrefix(entry, SnapshotEntryPrefix)
	const what = "snapshot"
	return k.removeManaged(ctx, scope, entry, what, func(bname string, b backend.Backend) (SessionEntry, bool, error) {
		sn, ok := b.(backend.ContainerSnapshots)
		if !ok {
			return SessionEntry{}, false, nil
		}
		owner := backend.ContainerOwner{User: scope.User}
		ls, err := sn.ListSnapshots(ctx, owner)
		if err != nil {
			return SessionEntry{}, true, err
		}
		var info backend.SnapshotInfo
		if i := slices.IndexFunc(ls, func(l backend.SnapshotInfo) bool { return l.Name == name }); i >= 0 {
			info = ls[i]
		}
		// One not listed is left to DeleteSnapshot to call not found.
		if err = refuseHeld(b, entry, what, info.Session); err == nil {
			info, err = sn.DeleteSnapshot(ctx, owner, name)
		}
		return managedEntry(scope, entry, info.Session, backend.SessionInfo{Backend: bname, Container: info.Image, Keep: true, State: "snapshot"}), true, err
	})
}
