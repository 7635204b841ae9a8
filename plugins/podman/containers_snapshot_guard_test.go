//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/images"

	"github.com/wai-dev/wai/host/backend"
)

// Another user cannot create from a snapshot by any form of its image's
// reference Podman resolves (full ID, the shortest unambiguous ID prefix,
// sha256:ID, repo@digest, its tag), and is told what a missing snapshot
// tells; the owner can, and finds the file the snapshot kept.
func TestSnapshotImageByIDIsOwners(t *testing.T) {
	t.Parallel()
	b, _, owner := containerTest(t, map[string]any{"containers": map[string]any{"build_dockerfiles": true}})
	orig := create(t, b, backend.ContainerSpec{Owner: owner, Purpose: "snapid", Network: "none"})
	ref := backend.ContainerRef{Owner: owner, Name: orig.Name}
	if r := cexec(t, b, ref, "echo owners-private > /tmp/data"); r.ExitCode != 0 {
		t.Fatalf("writing the file: %+v", r)
	}
	other := backend.ContainerOwner{User: "mallory", Session: owner.Session}
	info, err := b.SnapshotContainer(bg, ref, "snapid-"+newID()[:6])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
		defer cancel()
		_, _ = b.DestroyContainers(ctx, owner, false) // the restored one holds the image
		_, _ = b.DestroyContainers(ctx, other, false) // what a regression let through
		if _, err := b.DeleteSnapshot(ctx, owner, info.Name); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	img, err := images.GetImage(onServiceCtx(t, b.svc), info.Image, nil)
	if err != nil {
		t.Fatal(err)
	}
	forms := []string{img.ID, shortestPrefix(t, b, img.ID), "sha256:" + img.ID, info.Image, b.snapshotRepo(owner.User) + "@" + img.Digest.String()}
	for _, form := range forms {
		_, err := b.CreateContainer(bg, backend.ContainerSpec{Owner: other, Image: form, Network: "none"})
		if !errors.Is(err, backend.ErrNotFound) || !strings.Contains(err.Error(), "no such snapshot of yours") {
			t.Errorf("another user creating from the snapshot as %q: %v; want the ErrNotFound of a missing snapshot", form, err)
		}
	}
	refuseSnapshotBuilds(t, b, other, img.ID, shortestPrefix(t, b, img.ID))
	if ls, err := b.ListContainers(bg, other); err != nil || len(ls) != 0 {
		t.Errorf("another user's containers after the refusals: %+v, %v; want none", ls, err)
	}
	if !b.foreignSnapshot(owner, map[string]string{labelKind: kindTryRepoImage, labelUser: owner.User, labelSnapshot: info.Name}, nil) {
		t.Error("an image built FROM a snapshot passed as no snapshot: whose data it holds is unknown")
	}
	if b.foreignSnapshot(other, map[string]string{labelKind: kindTryRepoImage, labelUser: other.User}, []string{tryRepoRepoPrefix + "x:latest"}) {
		t.Error("a plain try-repo image passed as a snapshot")
	}
	for _, form := range []string{shortestPrefix(t, b, img.ID), "sha256:" + img.ID} {
		c := create(t, b, backend.ContainerSpec{Owner: owner, Image: form, Network: "none"})
		if r := cexec(t, b, backend.ContainerRef{Owner: owner, Name: c.Name}, "cat /tmp/data"); r.Stdout != "owners-private\n" {
			t.Errorf("the owner's container from %q: %+v", form, r)
		}
	}
	// A reference that resolved to another image at the create than at
	// the check (checked "") is checked again, and its container goes.
	c := create(t, b, backend.ContainerSpec{Owner: owner, Image: img.ID, Network: "none"})
	if err := b.verifyImage(bg, other, c.ID, "img", ""); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("verifying another user's container from the snapshot: %v; want ErrNotFound", err)
	}
	if _, err := b.ContainerStatus(bg, backend.ContainerRef{Owner: owner, Name: c.Name}, false); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("the container a verification refused: %v; want it removed", err)
	}
}

// shortestPrefix is the shortest prefix of id no other image's ID on the
// service shares: what a guesser needs.
func shortestPrefix(t *testing.T, b *Backend, id string) string {
	t.Helper()
	ls, err := images.List(onServiceCtx(t, b.svc), new(images.ListOptions).WithAll(true))
	if err != nil {
		t.Fatal(err)
	}
	n := 2
	for _, s := range ls {
		if s.ID == id {
			continue
		}
		for n < len(id) && strings.HasPrefix(s.ID, id[:n]) {
			n++
		}
	}
	// Two more: an image a parallel test makes meanwhile must not make
	// the prefix ambiguous (which is refused too, but for another reason).
	return id[:min(n+2, len(id))]
}

// refuseSnapshotBuilds: a Dockerfile reading another user's snapshot
// (by FROM, COPY --from or RUN --mount from, by ID or prefix) is refused
// before anything is built, as a create from it is.
func refuseSnapshotBuilds(t *testing.T, b *Backend, other backend.ContainerOwner, id, prefix string) {
	t.Helper()
	for _, df := range []string{
		"FROM " + prefix + "\n",
		"FROM " + testImage() + "\nCOPY --from=sha256:" + id + " /tmp/data /stolen\n",
		"ARG SNAP=" + prefix + "\nFROM " + testImage() + "\nRUN --mount=type=bind,from=${SNAP},target=/m cat /m/tmp/data\n",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
			t.Fatal(err)
		}
		key := "snapguard-" + newID()
		t.Cleanup(func() { b.removeFailedBuild(dockerfileTag(key)) }) // what a regression built
		_, err := b.BuildDockerfile(bg, other, backend.DockerfileBuild{ContextDir: dir, Key: key})
		if !errors.Is(err, backend.ErrNotFound) || !strings.Contains(err.Error(), "no such snapshot of yours") {
			t.Errorf("another user's build of %q: %v; want the ErrNotFound of a missing snapshot", df, err)
		}
	}
}
