package host

import (
	"context"
	"errors"
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
	var out []SessionEntry
	for _, s := range infos {
		if !scope.AllUsers && s.User != scope.User {
			continue
		}
		_, session, _ := backend.SplitSessionKey(s.Session)
		out = append(out, SessionEntry{User: s.User, Name: SnapshotEntryPrefix + s.Name, SessionInfo: backend.SessionInfo{
			Backend: name, Session: session, Created: s.Created, Size: s.Size, Keep: true, Container: s.Image, State: "snapshot"}})
	}
	return out, err
}

// removeManagedSnapshot deletes the snapshot of scope.User named by a wai
// ps entry name.
func (k *Kernel) removeManagedSnapshot(ctx context.Context, scope AdminScope, entry string) (SessionEntry, error) {
	name := strings.TrimPrefix(entry, SnapshotEntryPrefix)
	var errs []error
	for _, bname := range k.adminBackends() {
		b, err := k.adminBackend(ctx, bname)
		if err != nil {
			errs = append(errs, &BackendError{bname, err})
			continue
		}
		sn, ok := b.(backend.ContainerSnapshots)
		if !ok {
			continue
		}
		info, err := sn.DeleteSnapshot(ctx, backend.ContainerOwner{User: scope.User}, name)
		if errors.Is(err, backend.ErrNotFound) {
			continue
		}
		e := SessionEntry{User: scope.User, Name: entry, SessionInfo: backend.SessionInfo{Backend: bname, Container: info.Image, Keep: true, State: "snapshot"}}
		return e, err
	}
	err := backend.Errorf(backend.ErrNotFound, "rm", entry, "no snapshot of this user has this name (wai ps lists them)")
	if len(errs) > 0 {
		err = errors.Join(err, errors.Join(errs...))
	}
	return SessionEntry{}, err
}
