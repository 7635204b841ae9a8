//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/images"

	"github.com/wai-dev/wai/host/backend"
)

// Snapshot a container, destroy it, restore it under a new name: the
// file it wrote is there, the API key it was given is not in the image.
// Private keys refuse a snapshot until removed; another user sees
// nothing; a snapshot a container runs from is not deleted under it.
func TestContainerSnapshots(t *testing.T) {
	t.Parallel()
	b, _, owner := containerTest(t, map[string]any{"containers": map[string]any{"max_snapshots": 2}})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
		defer cancel()
		_, _ = b.DestroyContainers(ctx, owner, false) // a snapshot in use cannot be deleted
		ls, _ := b.ListSnapshots(ctx, owner)
		for _, s := range ls {
			if _, err := b.DeleteSnapshot(ctx, owner, s.Name); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	orig := create(t, b, backend.ContainerSpec{Owner: owner, Purpose: "snap", Network: "none",
		Env:          map[string]string{"FOO_API_KEY": "s3cret-snap-value", "PATH": "/tmp/nowhere:/usr/bin:/bin"},
		Files:        []backend.ContainerFile{{Path: ".ssh/id_test", Data: []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nxx\n"), Mode: 0o600}},
		Provisioning: map[string]bool{"forward_ssh": true}})
	ref := backend.ContainerRef{Owner: owner, Name: orig.Name}
	if r := cexec(t, b, ref, "echo kept-by-snapshot > ~/state.txt"); r.ExitCode != 0 {
		t.Fatalf("writing the file: %+v", r)
	}
	snap := "snap-" + newID()[:6]
	if _, err := b.SnapshotContainer(bg, ref, snap); !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "id_test") {
		t.Fatalf("a snapshot with a private key in ~/.ssh: %v; want ErrPermission naming it", err)
	}
	cexec(t, b, ref, "rm ~/.ssh/id_test")
	start := time.Now()
	info, err := b.SnapshotContainer(bg, ref, snap)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("snapshot took %v", time.Since(start))
	if info.Name != snap || info.Container != orig.Name || !strings.HasPrefix(info.Image, snapshotRepoPrefix) || strings.Join(info.StrippedEnv, ",") != "FOO_API_KEY,PATH" {
		t.Errorf("snapshot info %+v", info)
	}
	cctx := onServiceCtx(t, b.svc)
	img, err := images.GetImage(cctx, info.Image, nil)
	if err != nil {
		t.Fatal(err)
	}
	if env := strings.Join(img.Config.Env, " "); strings.Contains(env, "s3cret") || !strings.Contains(env, "FOO_API_KEY= ") && !strings.HasSuffix(env, "FOO_API_KEY=") ||
		strings.Contains(env, "/tmp/nowhere") || !strings.Contains(env, "PATH=/usr/local/sbin:") {
		t.Errorf("the snapshot image's env %q: the key's value must be reset, PATH the base image's", env)
	}
	if img.Labels[labelKind] != kindSnapshot || img.Labels[labelSnapshot] != snap || img.Labels[labelEnvKeys] != "" {
		t.Errorf("snapshot labels %v", img.Labels)
	}
	if _, err := os.Stat(b.snapshotMetaPath(owner.User, snap)); err != nil {
		t.Errorf("snapshot metadata: %v", err)
	}
	if _, err := b.SnapshotContainer(bg, ref, snap); !errors.Is(err, backend.ErrExist) {
		t.Errorf("the same name again: %v; want ErrExist", err)
	}
	// Two snapshots of one name at once: one is taken, the other told.
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := b.SnapshotContainer(bg, ref, snap+"-twice"); errs <- err }()
	}
	if e1, e2 := <-errs, <-errs; (e1 == nil) == (e2 == nil) || !errors.Is(errors.Join(e1, e2), backend.ErrExist) {
		t.Errorf("two snapshots of one name at once: %v, %v; want one taken and ErrExist", e1, e2)
	}
	if _, err := b.DeleteSnapshot(bg, owner, snap+"-twice"); err != nil {
		t.Error(err)
	}
	if _, err := b.SnapshotContainer(bg, ref, snap+"-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SnapshotContainer(bg, ref, snap+"-3"); !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "max_snapshots (2)") {
		t.Errorf("a snapshot past max_snapshots: %v; want ErrPermission naming it", err)
	}
	if _, err := b.DeleteSnapshot(bg, owner, snap+"-2"); err != nil {
		t.Fatal(err)
	}
	other := backend.ContainerOwner{User: "mallory", Session: owner.Session}
	if _, err := b.SnapshotImage(bg, other, snap); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("another user's restore: %v; want ErrNotFound", err)
	}
	if _, err := b.DeleteSnapshot(bg, other, snap); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("another user's delete: %v; want ErrNotFound", err)
	}
	if ls, err := b.ListSnapshots(bg, other); err != nil || len(ls) != 0 {
		t.Errorf("another user's list: %v, %v; want none", ls, err)
	}
	if ls, err := b.ListSnapshots(bg, owner); err != nil || len(ls) != 1 || ls[0].Name != snap || ls[0].Container != orig.Name || ls[0].Size == 0 {
		t.Errorf("list: %+v, %v", ls, err)
	}
	if _, err := b.DestroyContainer(bg, ref, true); err != nil {
		t.Fatal(err)
	}
	image, err := b.SnapshotImage(bg, owner, snap)
	if err != nil {
		t.Fatal(err)
	}
	// Naming the owner's snapshot image in a create does not get another
	// user past the labels.
	for _, stolen := range []string{image, strings.TrimPrefix(image, "localhost/"), b.snapshotRepo(owner.User) + "@sha256:" + strings.Repeat("0", 64)} {
		if _, err := b.CreateContainer(bg, backend.ContainerSpec{Owner: other, Image: stolen}); !errors.Is(err, backend.ErrNotFound) || !strings.Contains(err.Error(), "no such snapshot") {
			t.Errorf("mallory creating from the owner's snapshot image %s: %v; want ErrNotFound", stolen, err)
		}
	}
	restored := create(t, b, backend.ContainerSpec{Owner: owner, Name: "restored-" + newID()[:6], Image: image, Network: "none"})
	rref := backend.ContainerRef{Owner: owner, Name: restored.Name}
	if r := cexec(t, b, rref, `cat ~/state.txt; echo "key=[$FOO_API_KEY]"; echo "path=$PATH"`); !strings.Contains(r.Stdout, "kept-by-snapshot") ||
		!strings.Contains(r.Stdout, "key=[]") || !strings.Contains(r.Stdout, "path=/usr/local/sbin:") {
		t.Errorf("in the restored container: %+v", r)
	}
	if st, err := b.ContainerStatus(bg, rref, false); err != nil || st.Image != image {
		t.Errorf("restored container's status: %+v, %v", st, err)
	}
	if _, err := b.DeleteSnapshot(bg, owner, snap); !errors.Is(err, backend.ErrExist) || !strings.Contains(err.Error(), "destroy") {
		t.Errorf("deleting a snapshot a container runs from: %v; want ErrExist", err)
	}
	if _, err := b.DestroyContainer(bg, rref, true); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DeleteSnapshot(bg, owner, snap); err != nil {
		t.Fatal(err)
	}
	if ls, err := b.ListSnapshots(bg, owner); err != nil || len(ls) != 0 {
		t.Errorf("list after delete: %+v, %v", ls, err)
	}
	if _, err := b.SnapshotImage(bg, owner, snap); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("restoring a deleted snapshot: %v; want ErrNotFound", err)
	}
	if _, err := os.Stat(b.snapshotMetaPath(owner.User, snap)); !os.IsNotExist(err) {
		t.Errorf("snapshot metadata after delete: %v", err)
	}
	if _, err := b.SnapshotContainer(bg, ref, "bad name"); err == nil {
		t.Error("a snapshot of a destroyed container succeeded")
	}
}
