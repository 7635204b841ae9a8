//go:build linux && (amd64 || arm64)

package rootfs

import (
	"context"
	"errors"
	"os"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
)

// resolvedTarget returns the path a mutation acts on and how it is looked
// up: the request's own path, symlinks followed inside the root; or, when
// the kernel passed the resolved path a policy judged, that path with no
// symlink followed.
//
// Why act on the resolved path rather than re-check: between the policy's
// check and the change a process in the sandbox may swap a directory on the
// requested path for a symlink. Resolving the request again would then
// change an entry no policy saw; walking the judged path without following
// any symlink either reaches the judged entry or fails. (A directory that is
// renamed after the walk opened it keeps its descriptor: the change lands in
// the directory the policy judged, under whatever name it has now.)
func resolvedTarget(op, p, rel, resolved string) (string, lookup, error) {
	if resolved == "" {
		return rel, lookup{}, nil
	}
	target, err := cleanPath(op, resolved)
	if err != nil {
		return "", lookup{}, err
	}
	return target, lookup{resolved: true}, nil
}

// lookupErr maps an error of resolving a mutation's path rel. On a
// resolved path, ELOOP means a symlink appeared on it after the policies
// judged it (ResolvePath refused the links that lead nowhere, so a link
// there now is new); on a requested path a missing element may be such a
// link, which brokenLink names.
func (f *FS) lookupErr(root int, op, p, rel string, l lookup, err error) error {
	if !l.resolved {
		return f.explain(root, op, p, rel, err)
	}
	if err == syscall.ELOOP {
		return backend.Errorf(backend.ErrInvalid, op, p,
			"a symlink appeared on the path since the policies judged it (the workspace changed meanwhile): try again")
	}
	return mapErr(op, p, err)
}

// Write creates, overwrites or appends to a regular file, creating missing
// parent directories. A symlink at the path is followed inside the root, so
// writing through "current -> v2/app.conf" writes v2/app.conf.
func (f *FS) Write(ctx context.Context, req backend.WriteRequest) (backend.WriteResult, error) {
	const op = "fs.write"
	mode := req.Mode
	if mode == "" {
		mode = backend.WriteCreate
	}
	if mode != backend.WriteCreate && mode != backend.WriteOverwrite && mode != backend.WriteAppend {
		return backend.WriteResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path,
			"write mode %q is not one of create, overwrite, append", req.Mode)
	}
	if err := f.limits.CheckWrite(op, req.Path, req.Content); err != nil {
		return backend.WriteResult{}, err
	}
	rel, err := cleanPath(op, req.Path)
	if err != nil {
		return backend.WriteResult{}, err
	}
	if rel == "." {
		return backend.WriteResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path, "the workspace root is a directory: name a file inside it")
	}
	target, l, err := resolvedTarget(op, req.Path, rel, req.Resolved)
	if err != nil {
		return backend.WriteResult{}, err
	}
	l.create = true
	root, release, err := f.acquire(ctx, op, req.Path)
	if err != nil {
		return backend.WriteResult{}, err
	}
	defer release()
	dfd, name, _, err := f.resolveFinal(root, target, l)
	if err != nil {
		return backend.WriteResult{}, f.lookupErr(root, op, req.Path, target, l, err)
	}
	defer closeFD(dfd)
	file, created, err := f.openForWrite(dfd, name, mode)
	if err != nil {
		if errors.Is(err, syscall.EEXIST) {
			return backend.WriteResult{}, backend.Errorf(backend.ErrExist, op, req.Path, "file already exists: use edit to change it, or overwrite")
		}
		if errors.Is(err, syscall.ELOOP) { // a symlink appeared where resolveFinal saw none
			return backend.WriteResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path, "the file was replaced by a symlink meanwhile: try again")
		}
		if errors.Is(err, syscall.EISDIR) {
			return backend.WriteResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path, "is a directory: name a file inside it")
		}
		return backend.WriteResult{}, mapErr(op, req.Path, err)
	}
	defer file.Close()
	if err := writeAll(ctx, file, req.Content); err != nil {
		return backend.WriteResult{}, failed(ctx, op, req.Path, err)
	}
	if err := file.Close(); err != nil {
		return backend.WriteResult{}, mapErr(op, req.Path, err)
	}
	return backend.WriteResult{Path: rel, Bytes: len(req.Content), Created: created}, nil
}

// openForWrite opens (or creates) name in dfd for mode, never following a
// symlink and refusing anything but a regular file. Overwrite truncates only
// after the file is known to be regular.
func (f *FS) openForWrite(dfd int, name string, mode backend.WriteMode) (*os.File, bool, error) {
	const flags = syscall.O_WRONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_NOCTTY
	for attempt := 0; ; attempt++ {
		created := false
		var fd int
		var err error
		if mode != backend.WriteCreate {
			extra := 0
			if mode == backend.WriteAppend {
				extra = syscall.O_APPEND
			}
			fd, err = openat(dfd, name, flags|extra, 0)
		}
		if mode == backend.WriteCreate || err == syscall.ENOENT {
			fd, err = openat(dfd, name, flags|syscall.O_CREAT|syscall.O_EXCL, f.fileMode)
			created = err == nil
			if err == syscall.EEXIST && mode != backend.WriteCreate && attempt < 3 {
				continue // created by someone else meanwhile: open it instead
			}
		}
		if err == syscall.EACCES && notRegularAt(dfd, name) {
			// A FIFO or device the caller may not open is still no
			// file: said as such, whoever owns it.
			return nil, false, syscall.ENXIO
		}
		if err != nil {
			return nil, false, err
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			closeFD(fd)
			return nil, false, err
		}
		switch fileType(&st) {
		case syscall.S_IFREG:
		case syscall.S_IFDIR:
			closeFD(fd)
			return nil, false, syscall.EISDIR
		default:
			closeFD(fd)
			return nil, false, syscall.ENXIO
		}
		if created {
			if err := f.own(fd, f.fileMode); err != nil {
				closeFD(fd)
				return nil, false, err
			}
		} else if mode == backend.WriteOverwrite {
			if err := syscall.Ftruncate(fd, 0); err != nil {
				closeFD(fd)
				return nil, false, err
			}
		}
		return os.NewFile(uintptr(fd), name), created, nil
	}
}
