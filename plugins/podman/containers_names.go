//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"

	"github.com/wai-dev/wai/host/backend"
)

// Podman's container and network names are one namespace for the whole
// machine, while each user sees only their own managed objects. A name
// another user holds is refused without saying whose it is (a container
// of another user, or anything else on the machine): the answer tells a
// user only whether the name is theirs.

// containerNameTaken is the error for a create whose container name
// exists on the service.
func (b *Backend) containerNameTaken(ctx context.Context, op string, owner backend.ContainerOwner, name string) error {
	_, err := b.lookup(ctx, op, backend.ContainerRef{Owner: owner, Name: name})
	return nameTaken(op, name, "container", "destroy", err)
}

// networkNameTaken is the error for a create_network whose name exists
// on the service.
func (b *Backend) networkNameTaken(ctx context.Context, op string, owner backend.ContainerOwner, name string) error {
	_, err := b.lookupNetwork(ctx, op, backend.ContainerRef{Owner: owner, Name: name})
	return nameTaken(op, name, "network", "destroy_network", err)
}

// nameTaken is the error for a kind of object's taken name, given what
// looking the owner's object of that name up answered (nil: theirs).
func nameTaken(op, name, kind, remove string, lookupErr error) error {
	switch {
	case lookupErr == nil:
		return backend.Errorf(backend.ErrExist, op, name, "you have a %s of that name: choose another name, or %s it first", kind, remove)
	case !errors.Is(lookupErr, backend.ErrNotFound):
		return lookupErr
	}
	return backend.Errorf(backend.ErrExist, op, name,
		"that name is taken on this machine (Podman's %s names are shared by everything it runs): choose another name", kind)
}
