//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// hydrateVolume copies host_mounts into the new volume of w through the
// archive API of container ctrID (created, not started): the files travel
// as one tar stream over the service connection, so a service on another
// machine gets them without any shared path. Every mount is listed and
// checked against its budget first, as for a directory workspace; a file
// that changes size between the listing and the copy fails the copy rather
// than bust the budget.
func (b *Backend) hydrateVolume(ctx context.Context, w *Workspace, ctrID string) error {
	defer backend.StartProgress(ctx, "copying host_mounts into the workspace")()
	t0 := time.Now()
	h := newHydrator(b.cfg.AllowedHostRoots)
	var plan []hydrateEntry
	for i, m := range b.cfg.HostMounts {
		list, isDir, err := h.list(ctx, i, m)
		if err != nil {
			return err
		}
		for _, f := range list {
			target := m.MountPath
			if isDir {
				target = path.Join(m.MountPath, f.rel)
			}
			plan = append(plan, hydrateEntry{i: i, file: f, target: target})
		}
	}
	uid, gid := b.cfg.uidGID()
	var n int64
	err := b.putStream(ctx, "open", ctrID, ContainerWorkspace, func(tw *tar.Writer) error {
		return writeHydrateTar(ctx, tw, plan, uid, gid, &n)
	})
	if err != nil {
		return err
	}
	b.event(ctx, "runtime.podman.hydrated", w, "files", len(plan), "bytes", n, "duration", time.Since(t0))
	return nil
}

// hydrateEntry is one file of host_mounts and where it goes.
type hydrateEntry struct {
	i      int // the mount's index
	file   hydrateFile
	target string // relative to /workspace
}

// writeHydrateTar writes plan as tar entries owned by uid:gid, with the
// parent directories each file needs; the caller ends the stream. Sources are opened without
// following a symlink or blocking on a FIFO swapped in since the listing.
func writeHydrateTar(ctx context.Context, tw *tar.Writer, plan []hydrateEntry, uid, gid int, total *int64) error {
	dirs := map[string]bool{".": true}
	var mkdirs func(d string) error
	mkdirs = func(d string) error {
		if dirs[d] {
			return nil
		}
		if err := mkdirs(path.Dir(d)); err != nil {
			return err
		}
		dirs[d] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, Uid: uid, Gid: gid, ModTime: time.Now()})
	}
	for _, e := range plan {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := mkdirs(path.Dir(e.target)); err != nil {
			return err
		}
		n, err := tarFile(tw, e, uid, gid)
		if errors.Is(err, io.ErrClosedPipe) {
			return err // the upload ended: its error says why
		}
		if err != nil {
			return backend.Errorf(backend.ErrUnavailable, "open", e.file.src,
				"host_mounts[%d]: copying %s: %v", e.i, e.file.src, err)
		}
		*total += n
	}
	return nil
}

func tarFile(tw *tar.Writer, e hydrateEntry, uid, gid int) (int64, error) {
	in, fi, err := openSource(e.file.src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	if fi.Size() != e.file.size {
		return 0, fmt.Errorf("%s changed size while being copied (%d bytes, then %d)", e.file.src, e.file.size, fi.Size())
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: e.target, Size: fi.Size(), Mode: int64(hydratedPerm(e.file.mode)), Uid: uid, Gid: gid, ModTime: fi.ModTime()}
	if err := tw.WriteHeader(hdr); err != nil {
		return 0, err
	}
	n, err := io.CopyN(tw, in, fi.Size())
	if err != nil {
		return n, fmt.Errorf("%s: %w", e.file.src, err)
	}
	return n, nil
}
