//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

func TestContainerCopyRoundTrip(t *testing.T) {
	t.Parallel()
	roots := t.TempDir()
	b, w, owner := containerTest(t, map[string]any{"allowed_host_roots": []string{roots},
		"containers": map[string]any{"max_copy_bytes": "1m", "allow_write_mounts": true}})
	info := create(t, b, backend.ContainerSpec{Owner: owner})
	ref := backend.ContainerRef{Owner: owner, Name: info.Name}
	os.MkdirAll(filepath.Join(w.Dir(), "d/sub"), 0o755)
	os.WriteFile(filepath.Join(w.Dir(), "d/sub/a.txt"), []byte("hello\n"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(w.Dir(), "d/link"))
	copyDirRoundTrip(t, b, ref)
	if got, _ := os.ReadFile(filepath.Join(w.Dir(), "back/sub/a.txt")); string(got) != "hello\nmore\n" {
		t.Errorf("copied out %q", got)
	}
	if _, err := b.CopyToContainer(bg, ref, backend.ContainerCopy{HostPath: "/etc/hostname", ContainerPath: "/tmp/h"}); !errors.Is(err, backend.ErrPermission) {
		t.Errorf("copy_in from outside the roots: %v, want ErrPermission", err)
	}
	copySymlinkMessages(t, b, ref, roots)
	copyOutCapped(t, b, ref)
	copyAbsWorkspaceRefused(t, b, ref, w.Dir(), roots)
}

// copySymlinkMessages: a symlink out of the workspace (d/link, to
// /etc/passwd) or out of an allowed root is refused saying so, not in
// os.Root's words; a dangling symlink in the container is said to be one.
func copySymlinkMessages(t *testing.T, b *Backend, ref backend.ContainerRef, root string) {
	t.Helper()
	for _, p := range []string{"d/link", "d/link/x"} {
		_, err := b.CopyToContainer(bg, ref, backend.ContainerCopy{HostPath: p, ContainerPath: "/tmp/h"})
		if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "symlink that leads out of the session workspace") || strings.Contains(err.Error(), "escapes") {
			t.Errorf("copy_in of %s: %v; want ErrPermission saying the symlink leads out", p, err)
		}
	}
	os.Symlink("/etc", filepath.Join(root, "etc"))
	_, err := b.CopyFromContainer(bg, ref, backend.ContainerCopy{HostPath: filepath.Join(root, "etc", "x"), ContainerPath: "/tmp/d"})
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "leads out of its allowed_host_roots entry "+root) {
		t.Errorf("copy_out through a symlink out of the allowed root: %v; want ErrPermission saying so", err)
	}
	cexec(t, b, ref, "ln -s /nowhere /tmp/dangling")
	_, err = b.CopyFromContainer(bg, ref, backend.ContainerCopy{HostPath: "dangling", ContainerPath: "/tmp/dangling"})
	if !errors.Is(err, backend.ErrNotFound) || !strings.Contains(err.Error(), "symlink to /nowhere, which does not exist") {
		t.Errorf("copy_out of a dangling symlink: %v; want ErrNotFound saying it is one", err)
	}
	if _, err = b.CopyFromContainer(bg, ref, backend.ContainerCopy{HostPath: "x", ContainerPath: "/tmp/no-such"}); !errors.Is(err, backend.ErrNotFound) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("copy_out of a missing file: %v; want ErrNotFound", err)
	}
}

// copyAbsWorkspaceRefused: an absolute host_path into the workspace (dir),
// spelled so or through a symlink under an allowed root, is refused both
// ways, telling the relative path; the allowed root itself still works.
func copyAbsWorkspaceRefused(t *testing.T, b *Backend, ref backend.ContainerRef, dir, root string) {
	t.Helper()
	os.Symlink(dir, filepath.Join(root, "ws"))
	for _, p := range []string{filepath.Join(dir, "abs-out"), filepath.Join(root, "ws", "abs-out")} {
		_, err := b.CopyFromContainer(bg, ref, backend.ContainerCopy{HostPath: p, ContainerPath: "/tmp/d"})
		if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "relative to the workspace") {
			t.Errorf("copy_out to %s: %v; want ErrPermission asking for a relative path", p, err)
		}
		_, err = b.CopyToContainer(bg, ref, backend.ContainerCopy{HostPath: filepath.Join(filepath.Dir(p), "d"), ContainerPath: "/tmp/abs-in"})
		if !errors.Is(err, backend.ErrPermission) {
			t.Errorf("copy_in from %s: %v; want ErrPermission", filepath.Dir(p), err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "abs-out")); !os.IsNotExist(err) {
		t.Errorf("a refused copy_out wrote into the workspace: %v", err)
	}
	if res, err := b.CopyFromContainer(bg, ref, backend.ContainerCopy{HostPath: filepath.Join(root, "out"), ContainerPath: "/tmp/d"}); err != nil || res.Files != 1 {
		t.Errorf("copy_out under allowed_host_roots: %+v, %v", res, err)
	}
}

// copyDirRoundTrip copies the workspace's d (d/sub/a.txt holding "hello",
// and d/link, a symlink) to /tmp/d in the container, which must hold the
// file but not the symlink, appends "more" to the file there, and copies
// /tmp/d back out to back.
func copyDirRoundTrip(t *testing.T, b *Backend, ref backend.ContainerRef) {
	t.Helper()
	res, err := b.CopyToContainer(bg, ref, backend.ContainerCopy{HostPath: "d", ContainerPath: "/tmp/d"})
	if err != nil || res.Files != 1 || res.Bytes != 6 {
		t.Fatalf("CopyToContainer = %+v, %v", res, err)
	}
	if out := cexec(t, b, ref, "cat /tmp/d/sub/a.txt; ls -A /tmp/d; echo more >> /tmp/d/sub/a.txt"); out.Stdout != "hello\nsub\n" {
		t.Errorf("in the container: %+v (the symlink must stay behind)", out)
	}
	res, err = b.CopyFromContainer(bg, ref, backend.ContainerCopy{HostPath: "back", ContainerPath: "/tmp/d"})
	if err != nil || res.Files != 1 {
		t.Fatalf("CopyFromContainer = %+v, %v", res, err)
	}
}

// copyOutCapped: copy_out of a file over max_copy_bytes (the caller's
// backend sets 1m) is refused.
func copyOutCapped(t *testing.T, b *Backend, ref backend.ContainerRef) {
	t.Helper()
	cexec(t, b, ref, "head -c 2000000 /dev/zero > /tmp/big")
	if _, err := b.CopyFromContainer(bg, ref, backend.ContainerCopy{HostPath: "big", ContainerPath: "/tmp/big"}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("copy_out above max_copy_bytes: %v, want ErrInvalid", err)
	}
}
