//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// hostSide is where a copy's host path lies: an os.Root (no symlink leads
// out of it) and the path inside.
type hostSide struct {
	root *os.Root
	rel  string
	// workspace: the session's own directory, whose files the session
	// container's user must own.
	workspace bool
}

// openHostSide confines a copy's host path: relative to the session
// workspace, or absolute under allowed_host_roots (copyContainer has
// refused an absolute one in the workspace).
// Writing to an allowed root needs containers.allow_write_mounts.
func (b *Backend) openHostSide(op string, owner backend.ContainerOwner, p string, write bool) (*hostSide, error) {
	ws, err := b.cfg.pathsFor(backend.WorkspaceSpec{Session: owner.Session, User: owner.User})
	if err != nil {
		return nil, err
	}
	if p == "" {
		return nil, backend.Errorf(backend.ErrInvalid, op, "", "give host_path: a path in the session workspace, or an absolute one under allowed_host_roots")
	}
	if ws.volume != "" && (!filepath.IsAbs(p) || p == ws.dir || strings.HasPrefix(p, ws.dir+"/")) {
		return nil, errVolumeHostSide(op, p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws.dir, p)
	}
	p = filepath.Clean(p)
	rootDir, inWorkspace := "", false
	if p == ws.dir || strings.HasPrefix(p, ws.dir+"/") {
		rootDir, inWorkspace = ws.dir, true
	} else if r, ok := underRoot(b.cfg.AllowedHostRoots, p); ok {
		if write && !b.cfg.Containers.AllowWriteMounts {
			return nil, backend.Errorf(backend.ErrPermission, op, p,
				"copying out to allowed_host_roots needs containers.allow_write_mounts = true in [backends.podman]; copy into the session workspace instead")
		}
		rootDir = r
	} else {
		return nil, backend.Errorf(backend.ErrPermission, op, p, "the host path is neither in the session workspace nor under allowed_host_roots %v of [backends.podman]", b.cfg.AllowedHostRoots)
	}
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		return nil, backend.Errorf(backend.ErrNotFound, op, p, "cannot open %s: %v", rootDir, err)
	}
	rel, _ := filepath.Rel(rootDir, p)
	return &hostSide{root: root, rel: rel, workspace: inWorkspace}, nil
}

// escaped is the error for err when it is os.Root's refusal of a
// symlink leading out of the host side's root (Go's own text, "path
// escapes from parent", names no path the caller gave), else nil.
func (hs *hostSide) escaped(op, p string, err error) error {
	if !strings.Contains(err.Error(), "path escapes from parent") {
		return nil
	}
	where := "the session workspace"
	if !hs.workspace {
		where = "its allowed_host_roots entry " + hs.root.Name()
	}
	return backend.Errorf(backend.ErrPermission, op, p,
		"the path is, or passes through, a symlink that leads out of %s, which copies may not follow: give the path of a file inside it", where)
}

// refuseAbsWorkspace refuses an absolute host_path in the session
// workspace, whether it is spelled there or leads there by symlinks: the
// kernel puts a relative one to the policies (copy_out as the fs.write of
// that path) but cannot tell an absolute one is in the workspace, so only
// relative paths may reach it.
func (b *Backend) refuseAbsWorkspace(op string, owner backend.ContainerOwner, p string) error {
	if !filepath.IsAbs(p) {
		return nil
	}
	ws, err := b.cfg.pathsFor(backend.WorkspaceSpec{Session: owner.Session, User: owner.User})
	if err != nil {
		return err
	}
	dir, clean := filepath.Clean(ws.dir), filepath.Clean(p)
	real, realDir := realPrefix(clean), realPrefix(dir)
	if !underAny(clean, dir) && !underAny(real, dir) && !underAny(real, realDir) {
		return nil
	}
	rel, err := filepath.Rel(dir, clean)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "its path inside the workspace"
	}
	return backend.Errorf(backend.ErrPermission, op, p,
		"the path is in the session workspace: give host_path relative to the workspace (%s), as the policies judge only relative ones; absolute paths are for allowed_host_roots", rel)
}

// realPrefix is p with the symlinks of its longest existing ancestor
// resolved (the rest appended as it is): where a copy to p would land.
func realPrefix(p string) string {
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

func checkContainerPath(op, p string) error {
	if !path.IsAbs(p) || path.Clean(p) != p || p == "/" {
		return backend.Errorf(backend.ErrInvalid, op, p, "container_path must be a clean absolute path other than /")
	}
	return nil
}

// CopyToContainer copies a host file or directory to container_path
// (whose parent must exist in the container), through the archive API.
func (b *Backend) CopyToContainer(ctx context.Context, ref backend.ContainerRef, req backend.ContainerCopy) (backend.ContainerCopyResult, error) {
	return b.copyContainer(ctx, "containers.copy_in", ref, req, true, b.copyIn)
}

// CopyFromContainer copies a container file or directory to host_path,
// writing only through the confined root and at most max_copy_bytes.
func (b *Backend) CopyFromContainer(ctx context.Context, ref backend.ContainerRef, req backend.ContainerCopy) (backend.ContainerCopyResult, error) {
	return b.copyContainer(ctx, "containers.copy_out", ref, req, false, b.copyOut)
}

// copyVia is one direction of a copy through the archive API, once the
// container's ID and the confined host side are known; it counts what it
// copies in res.
type copyVia func(ctx context.Context, op, id string, hs *hostSide, res *backend.ContainerCopyResult) error

// copyContainer does what both directions check first, so they cannot
// differ in it: a clean container path, a container the owner may use, and
// the host path — in the session's volume (copied through the volume) or
// confined to an os.Root, written to only when copying out.
func (b *Backend) copyContainer(ctx context.Context, op string, ref backend.ContainerRef, req backend.ContainerCopy, in bool, via copyVia) (backend.ContainerCopyResult, error) {
	res := backend.ContainerCopyResult{HostPath: req.HostPath, ContainerPath: req.ContainerPath}
	if err := checkContainerPath(op, req.ContainerPath); err != nil {
		return res, err
	}
	if err := b.refuseAbsWorkspace(op, ref.Owner, req.HostPath); err != nil {
		return res, err
	}
	data, err := b.lookup(ctx, op, ref)
	if err != nil {
		return res, err
	}
	if rel, ok := b.volumeCopySide(ref.Owner, req.HostPath); ok {
		r, err := b.copyVolume(ctx, op, ref.Owner, rel, data.ID, req.ContainerPath, in)
		r.HostPath, r.ContainerPath = res.HostPath, res.ContainerPath
		return r, err
	}
	hs, err := b.openHostSide(op, ref.Owner, req.HostPath, !in)
	if err != nil {
		return res, err
	}
	defer hs.root.Close()
	err = via(ctx, op, data.ID, hs, &res)
	return res, err
}

// copyIn packs the host side into a tar archive and puts it into the
// container beside container_path.
func (b *Backend) copyIn(ctx context.Context, op, id string, hs *hostSide, res *backend.ContainerCopyResult) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	budget := b.cfg.Containers.copyBytes
	base := path.Base(res.ContainerPath)
	err := fs.WalkDir(hs.root.FS(), filepath.ToSlash(hs.rel), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		name := base + strings.TrimPrefix(p, filepath.ToSlash(hs.rel))
		if hs.rel == "." {
			name = path.Join(base, p)
		}
		switch {
		case fi.IsDir():
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime()})
		case !fi.Mode().IsRegular():
			return nil // symlinks and devices stay behind: never followed
		}
		if budget -= fi.Size(); budget < 0 {
			return backend.Errorf(backend.ErrInvalid, op, res.HostPath, "more than containers.max_copy_bytes (%s) to copy", b.cfg.Containers.MaxCopyBytes)
		}
		f, err := hs.root.Open(filepath.FromSlash(p))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(fi.Mode().Perm()), Size: fi.Size(), ModTime: fi.ModTime()}); err != nil {
			return err
		}
		n, err := io.Copy(tw, io.LimitReader(f, fi.Size()))
		res.Files++
		res.Bytes += n
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		if backend.KindOf(err) != nil {
			return err
		}
		if errors.Is(err, fs.ErrNotExist) {
			return backend.Errorf(backend.ErrNotFound, op, res.HostPath, "no such host file")
		}
		if e := hs.escaped(op, res.HostPath, err); e != nil {
			return e
		}
		return backend.Errorf(backend.ErrInvalid, op, res.HostPath, "cannot read it: %v", err)
	}
	return b.putArchive(ctx, op, id, path.Dir(res.ContainerPath), &buf)
}

// copyOut streams container_path out as a tar archive and extracts it
// into the host side.
func (b *Backend) copyOut(ctx context.Context, op, id string, hs *hostSide, res *backend.ContainerCopyResult) error {
	r, err := b.getArchive(ctx, op, id, res.ContainerPath)
	if err != nil {
		return err
	}
	defer r.Close()
	return b.extract(tar.NewReader(r), hs, path.Base(res.ContainerPath), res)
}

// extract writes a tar stream whose entries start with base to the host
// side, renaming base to the host path's last element.
func (b *Backend) extract(tr *tar.Reader, hs *hostSide, base string, res *backend.ContainerCopyResult) error {
	const op = "containers.copy_out"
	return b.eachCopied(tr, op, base, res.ContainerPath, func(h *tar.Header, rest string) error {
		dst := filepath.Join(hs.rel, filepath.FromSlash(rest))
		if h.Typeflag == tar.TypeDir {
			if err := hs.root.MkdirAll(dst, 0o755); err != nil {
				if e := hs.escaped(op, res.HostPath, err); e != nil {
					return e
				}
				return backend.Errorf(backend.ErrInvalid, op, res.HostPath, "cannot create %s: %v", dst, err)
			}
			b.ownHost(hs, dst)
			return nil
		}
		if err := writeHostFile(hs.root, dst, tr, h); err != nil {
			if e := hs.escaped(op, res.HostPath, err); e != nil {
				return e
			}
			return backend.Errorf(backend.ErrInvalid, op, res.HostPath, "cannot write %s: %v", dst, err)
		}
		b.ownHost(hs, dst)
		res.Files++
		res.Bytes += h.Size
		return nil
	})
}

// eachCopied calls take for each directory and regular file of a tar
// stream whose entries start with base (rest: the remainder of its name,
// "" or "/…"), for a file only while the files so far stay within
// max_copy_bytes; links, devices and entries outside base stay behind.
// Every archive the archive API hands out goes through it, whether it is
// extracted onto the host (extract) or passed on to another container
// (retar), so both keep the same rules; errors name op and at.
func (b *Backend) eachCopied(tr *tar.Reader, op, base, at string, take func(h *tar.Header, rest string) error) error {
	budget := b.cfg.Containers.copyBytes
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return backend.Errorf(backend.ErrUnavailable, op, at, "reading the archive: %v", err)
		}
		rest, ok := strings.CutPrefix(strings.TrimSuffix(h.Name, "/"), base)
		if !ok || rest != "" && !strings.HasPrefix(rest, "/") || strings.Contains(rest, "..") {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg:
			if budget -= h.Size; budget < 0 {
				return backend.Errorf(backend.ErrInvalid, op, at, "more than containers.max_copy_bytes (%s) to copy", b.cfg.Containers.MaxCopyBytes)
			}
		default:
			continue
		}
		if err := take(h, rest); err != nil {
			return err
		}
	}
}

func writeHostFile(root *os.Root, dst string, r io.Reader, h *tar.Header) error {
	if d := filepath.Dir(dst); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	f, err := root.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fs.FileMode(h.Mode).Perm()&0o755|0o600)
	if err != nil {
		return err
	}
	_, err = io.CopyN(f, r, h.Size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ownHost gives what a copy wrote into the session workspace to the
// session container's user, so its commands can change it.
func (b *Backend) ownHost(hs *hostSide, p string) {
	if hs.workspace && b.owner != nil {
		_ = hs.root.Lchown(p, b.owner.uid, b.owner.gid)
	}
}
