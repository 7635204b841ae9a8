//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"archive/tar"
	"context"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// volumeCopySide reports whether a container copy's host path names the
// session's workspace in a volume configuration, and its path there: a
// relative one does (copyContainer refused an absolute one in the
// workspace; the rest are under allowed_host_roots, as ever).
func (b *Backend) volumeCopySide(owner backend.ContainerOwner, hostPath string) (rel string, ok bool) {
	ws, err := b.cfg.pathsFor(backend.WorkspaceSpec{Session: owner.Session, User: owner.User})
	if err != nil || ws.volume == "" || hostPath == "" || filepath.IsAbs(hostPath) {
		return "", false
	}
	return strings.TrimPrefix(path.Clean("/"+filepath.ToSlash(hostPath)), "/"), true
}

// copyVolume copies between a managed container (ctrID, containerPath)
// and the session's volume workspace (rel) as a tar stream from one
// container to the other through the archive API; in: to the managed
// container. The workspace side is resolved by the session's agent, inside
// /workspace; only directories and regular files cross, within
// max_copy_bytes.
func (b *Backend) copyVolume(ctx context.Context, op string, owner backend.ContainerOwner, rel, ctrID, containerPath string, in bool) (backend.ContainerCopyResult, error) {
	var res backend.ContainerCopyResult
	b.mu.Lock()
	w := b.open[openKey(owner.User, owner.Session)]
	b.mu.Unlock()
	if w == nil || w.volume == "" {
		return res, backend.Errorf(backend.ErrUnavailable, op, rel, "the session's workspace is a volume reached through the session: open the session in this process first")
	}
	if rel == "" {
		rel = "."
	}
	r, ok := w.files.(backend.PathResolver)
	if !ok {
		return res, backend.Errorf(backend.ErrUnavailable, op, rel, "the workspace's file service cannot resolve paths")
	}
	real, err := r.ResolvePath(ctx, rel, true)
	if err != nil {
		return res, err
	}
	st, err := w.ensure(ctx)
	if err != nil {
		return res, err
	}
	wsPath := path.Join(ContainerWorkspace, real)
	src, srcPath, dst, dstDir, dstBase := st.id, wsPath, ctrID, path.Dir(containerPath), path.Base(containerPath)
	if !in {
		src, srcPath, dst, dstDir, dstBase = ctrID, containerPath, st.id, path.Dir(wsPath), path.Base(wsPath)
	}
	if dstBase == "." || dstBase == "/" || dstBase == path.Base(ContainerWorkspace) && dstDir == "/" {
		return res, backend.Errorf(backend.ErrInvalid, op, rel, "name a file or directory in the workspace, not the workspace itself")
	}
	archive, err := b.getArchive(ctx, op, src, srcPath)
	if err != nil {
		return res, err
	}
	defer archive.Close()
	err = b.putStream(ctx, op, dst, dstDir, func(tw *tar.Writer) error {
		return b.retar(tar.NewReader(archive), tw, path.Base(srcPath), dstBase, &res)
	})
	return res, err
}

// retar passes directories and regular files of a tar stream whose
// entries start with from on, renamed to start with to, within
// max_copy_bytes.
func (b *Backend) retar(tr *tar.Reader, tw *tar.Writer, from, to string, res *backend.ContainerCopyResult) error {
	return b.eachCopied(tr, "containers.copy", from, from, func(h *tar.Header, rest string) error {
		if h.Typeflag == tar.TypeDir {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: to + rest + "/", Mode: h.Mode & 0o777, ModTime: h.ModTime})
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: to + rest, Mode: h.Mode & 0o777, Size: h.Size, ModTime: h.ModTime}); err != nil {
			return err
		}
		n, err := io.CopyN(tw, tr, h.Size)
		if err != nil {
			return err
		}
		res.Files++
		res.Bytes += n
		return nil
	})
}
