package backend

import (
	"context"
	"time"
)

// ContainerSnapshots is implemented by backends that can save a managed
// container's state as a named image of its user and create containers
// from it again (a checkpoint before a risky change, an environment set
// up once and reused). It is optional: the kernel finds it by type
// assertion and answers ErrUnavailable without it.
//
// Snapshots belong to a user (ContainerOwner.User), not to a session:
// they outlive the session that made them (keeping them is the point),
// and another user's snapshot is ErrNotFound, as for a name that does not
// exist.
type ContainerSnapshots interface {
	// SnapshotContainer saves ref's container as the snapshot name ("" makes
	// one from the container's name and the time). Credentials the kernel
	// forwarded do not go into it: the values of the variables it passed
	// are reset (SnapshotInfo.StrippedEnv names them), and a container
	// holding private keys is refused (ErrPermission saying what to remove).
	// A name in use is ErrExist.
	SnapshotContainer(ctx context.Context, ref ContainerRef, name string) (SnapshotInfo, error)
	// ListSnapshots lists the user's snapshots (owner.Session is ignored),
	// sorted by name.
	ListSnapshots(ctx context.Context, owner ContainerOwner) ([]SnapshotInfo, error)
	// SnapshotImage is the image a create uses to restore the user's
	// snapshot name.
	SnapshotImage(ctx context.Context, owner ContainerOwner, name string) (string, error)
	// DeleteSnapshot removes the user's snapshot name. One a container
	// still runs from is ErrExist, naming what to destroy first.
	DeleteSnapshot(ctx context.Context, owner ContainerOwner, name string) (SnapshotInfo, error)
}

// SnapshotInfo describes a snapshot. It never holds a secret.
type SnapshotInfo struct {
	Name  string `json:"name"`
	Image string `json:"image"` // what restore creates from
	ID    string `json:"id"`
	// Container is the container it was taken from, SourceImage that
	// container's image.
	Container   string    `json:"container"`
	SourceImage string    `json:"source_image,omitempty"`
	Purpose     string    `json:"purpose,omitempty"`
	Session     string    `json:"session,omitempty"`
	User        string    `json:"user,omitempty"`
	Created     time.Time `json:"created"`
	Size        int64     `json:"size,omitempty"`
	// StrippedEnv names the variables whose values were reset in the
	// image: a restore passes them again as a create does.
	StrippedEnv []string `json:"stripped_env,omitempty"`
}

// ManagedSnapshotLister is implemented by backends with
// ContainerSnapshots, for wai ps: every user's snapshots (the kernel
// filters by user).
type ManagedSnapshotLister interface {
	ListManagedSnapshots(ctx context.Context) ([]SnapshotInfo, error)
}
