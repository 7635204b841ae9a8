//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"strings"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/bindings/images"

	"github.com/wai-dev/wai/host/backend"
)

// A snapshot holds what its user's container held: only its owner may
// create from it. A create names an image in many forms Podman resolves
// alike (name, tag, full or short ID, sha256:ID, repo@digest), so the
// name alone proves nothing: checkSnapshotImage refuses the name form
// early (no service call), guardImage asks the service what the reference
// resolves to before the create, and verifyImage checks the image the
// created container really got, so that a reference resolving otherwise
// between the two (a new image, a moved tag) is caught too.

// errForeignSnapshot is the one answer for another user's snapshot, in
// whatever form it was named: the same as for a snapshot that does not
// exist, so a create tells no one what others have.
func errForeignSnapshot(image string) error {
	return backend.Errorf(backend.ErrNotFound, "containers.create", image, "no such snapshot of yours: restore one list_snapshots shows")
}

// checkSnapshotImage keeps a create from naming another user's snapshot
// image directly (the repository's hash is no secret). A short name
// counts: Podman finds a local image by it under localhost/.
func (b *Backend) checkSnapshotImage(owner backend.ContainerOwner, image string) error {
	short := strings.TrimPrefix(snapshotRepoPrefix, "localhost/")
	own := strings.TrimPrefix(b.snapshotRepo(owner.User), "localhost/") + ":"
	if name := strings.TrimPrefix(image, "localhost/"); !strings.HasPrefix(name, short) || strings.HasPrefix(name, own) {
		return nil
	}
	return errForeignSnapshot(image)
}

// foreignSnapshot reports whether an image with these labels and tags is
// a snapshot, or was built from one, that is not owner's in this
// configuration. A commit rewrites every wai label, so an own snapshot has
// wai.kind=snapshot with the owner's user and home; a build FROM a
// snapshot keeps its wai.snapshot label but overwrites wai.kind and
// wai.user, so who it came from is unknown: refused, failing closed.
func (b *Backend) foreignSnapshot(owner backend.ContainerOwner, labels map[string]string, tags []string) bool {
	marked := labels[labelKind] == kindSnapshot || labels[labelSnapshot] != ""
	own := b.snapshotRepo(owner.User) + ":"
	for _, t := range tags {
		if strings.HasPrefix(t, snapshotRepoPrefix) {
			if !strings.HasPrefix(t, own) {
				return true
			}
			marked = true
		}
	}
	return marked && (labels[labelKind] != kindSnapshot || labels[labelUser] != owner.User || labels[labelHome] != b.cfg.fixedDir())
}

// guardImage resolves image on the service as a create will and refuses
// another user's snapshot; it returns the image's ID, "" when the service
// knows no such image (the create then says so).
func (b *Backend) guardImage(ctx context.Context, owner backend.ContainerOwner, image string) (string, error) {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return "", err
	}
	img, err := images.GetImage(cctx, image, nil)
	if err != nil {
		if notFound(err) || strings.Contains(err.Error(), "image not known") {
			return "", nil
		}
		return "", b.svc.wrap(ctx, "containers.create", image, err)
	}
	if img.ImageData == nil {
		return "", backend.Errorf(backend.ErrUnavailable, "containers.create", image, "the Podman service described the image without its data")
	}
	if b.foreignSnapshot(owner, img.Labels, img.RepoTags) {
		return "", errForeignSnapshot(image)
	}
	return img.ID, nil
}

// verifyImage checks the image container id was created from: when it is
// not the one guardImage passed (checked), it is checked now, and the
// container is removed if it is another user's snapshot.
func (b *Backend) verifyImage(ctx context.Context, owner backend.ContainerOwner, id, image, checked string) error {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return err
	}
	data, err := containers.Inspect(cctx, id, nil)
	if err != nil {
		b.removeQuiet(id)
		return b.svc.wrap(ctx, "containers.create", image, err)
	}
	if data.Image == checked {
		return nil
	}
	if _, err := b.guardImage(ctx, owner, data.Image); err != nil {
		b.removeQuiet(id)
		if errors.Is(err, backend.ErrNotFound) {
			return errForeignSnapshot(image)
		}
		return err
	}
	return nil
}
