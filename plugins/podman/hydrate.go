package podman

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/pathglob"
	"github.com/wai-dev/wai/host/backend/rootfs"
)

// hydrator copies host mounts (docs/ARCHITECTURE.md) into a new, empty workspace
// directory before its container first starts. Sources must lie under one of
// the allowed roots once every symlink in their path is resolved; inside a
// source, symlinks are skipped rather than followed, since they could lead
// anywhere on the host. Each mount is listed in full and checked against its
// byte budget before anything is copied, so a mount over budget copies
// nothing.
type hydrator struct {
	roots []string // allowed roots, symlinks resolved
}

type ownerIDs struct{ uid, gid int }

type hydrateFile struct {
	src, rel string
	size     int64
	mode     fs.FileMode
}

func newHydrator(allowed []string) *hydrator {
	h := &hydrator{}
	for _, r := range allowed {
		if real, err := filepath.EvalSymlinks(r); err == nil {
			h.roots = append(h.roots, filepath.Clean(real))
		}
	}
	return h
}

// run copies every mount into the workspace through fsys, the same
// root-confined file system the file tools use: a symlink a process in the
// container planted in the workspace (a kept session's container may still
// run) is resolved inside it and never leads wai, as root, out of it.
func (h *hydrator) run(ctx context.Context, fsys *rootfs.FS, mounts []HostMount) (int, int64, error) {
	defer backend.StartProgress(ctx, "copying host_mounts into the workspace")()
	var files int
	var total int64
	for i, m := range mounts {
		list, isDir, err := h.list(ctx, i, m)
		if err != nil {
			return files, total, err
		}
		for _, f := range list {
			if err := ctx.Err(); err != nil {
				return files, total, err
			}
			target := m.MountPath
			if isDir {
				target = path.Join(m.MountPath, f.rel)
			}
			n, err := h.copyFile(ctx, fsys, f.src, target, f.mode)
			if err != nil {
				var be *backend.Error
				if errors.As(err, &be) || ctx.Err() != nil {
					return files, total, fmt.Errorf("host_mounts[%d]: copying %s: %w", i, f.src, err)
				}
				return files, total, backend.Errorf(backend.ErrUnavailable, "open", m.HostPath,
					"host_mounts[%d]: copying %s: %v", i, f.src, err)
			}
			files++
			total += n
		}
	}
	return files, total, nil
}

// list walks one mount and returns the files to copy, within its budget.
func (h *hydrator) list(ctx context.Context, i int, m HostMount) ([]hydrateFile, bool, error) {
	bad := func(kind error, format string, args ...any) error {
		return backend.Errorf(kind, "open", m.HostPath, "host_mounts[%d]: "+format, append([]any{i}, args...)...)
	}
	src, err := filepath.EvalSymlinks(m.HostPath)
	if err != nil {
		return nil, false, bad(backend.ErrInvalid, "the host path cannot be read: %v", err)
	}
	if !h.allowed(src) {
		return nil, false, bad(backend.ErrPermission, "%s is not under any of allowed_host_roots %v: add its directory there, or mount something else", src, h.roots)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return nil, false, bad(backend.ErrInvalid, "%v", err)
	}
	var out []hydrateFile
	var total int64
	add := func(p, rel string, fi fs.FileInfo) error {
		total += fi.Size()
		if total > m.MaxBytes {
			return bad(backend.ErrInvalid, "the files come to more than max_bytes (%d bytes): raise max_bytes or narrow include/exclude", m.MaxBytes)
		}
		out = append(out, hydrateFile{src: p, rel: rel, size: fi.Size(), mode: fi.Mode()})
		return nil
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return nil, false, bad(backend.ErrInvalid, "only regular files and directories can be mounted")
		}
		return out, false, add(src, filepath.Base(src), fi)
	}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == src {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, src+string(filepath.Separator)))
		if d.IsDir() {
			if matchAny(m.Exclude, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() { // symlinks, FIFOs, devices: never followed or copied
			return nil
		}
		if len(m.Include) > 0 && !matchAny(m.Include, rel) || matchAny(m.Exclude, rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return add(p, rel, info)
	})
	if err != nil {
		var be *backend.Error
		if errors.As(err, &be) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, false, err
		}
		return nil, false, bad(backend.ErrInvalid, "walking %s: %v", src, err)
	}
	return out, true, nil
}

func (h *hydrator) allowed(p string) bool {
	for _, r := range h.roots {
		if p == r || strings.HasPrefix(p, r+string(filepath.Separator)) || r == "/" {
			return true
		}
	}
	return false
}

// copyFile copies a regular file, opened without following a symlink or
// blocking on a FIFO swapped in since the walk, into a new file of the
// workspace.
func (h *hydrator) copyFile(ctx context.Context, fsys *rootfs.FS, src, dst string, mode fs.FileMode) (int64, error) {
	in, _, err := openSource(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	return fsys.CopyIn(ctx, dst, in, hydratedPerm(mode))
}

// openSource opens a source file the walk listed, without following a
// symlink or blocking on a FIFO swapped in since, and checks it is still a
// regular file; both hydrators (directory and volume) copy only through it.
func openSource(src string) (*os.File, fs.FileInfo, error) {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := in.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is no longer a regular file", src)
	}
	if err != nil {
		in.Close()
		return nil, nil, err
	}
	return in, fi, nil
}

// hydratedPerm is a copied file's mode: only whether it is executable
// survives, so a source's odd permissions do not reach the workspace.
func hydratedPerm(mode fs.FileMode) fs.FileMode {
	if mode&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// matchAny reports whether rel (slash-separated) matches one of the globs
// (host/backend/pathglob, as the file tools' Glob); a glob without "/"
// also matches the base name alone.
func matchAny(globs []string, rel string) bool {
	for _, g := range globs {
		if matchGlob(g, rel) || !strings.Contains(g, "/") && matchGlob(g, path.Base(rel)) {
			return true
		}
	}
	return false
}

func matchGlob(glob, rel string) bool {
	return pathglob.New(strings.Split(strings.Trim(glob, "/"), "/")).Match(strings.Split(rel, "/"))
}
