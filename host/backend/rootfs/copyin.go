//go:build linux && (amd64 || arm64)

package rootfs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
)

// CopyIn creates the new regular file p (missing parents included, with
// the FS's directory mode and owner) and copies r into it, confined to the
// root exactly as Write is: a symlink in any path element, planted by a
// process that shares the directory, is resolved inside the root and never
// leads out of it. An existing entry at p is left alone (ErrExist). perm
// is applied exactly, with the FS's owner. Unlike Write, the content is
// streamed and bounded by nothing but the file system: the podman backend
// copies host_mounts in with it, each mount within its own byte budget.
//
// The file is made by Write itself (empty), then opened again through the
// root: one confinement, whatever Write's resolution rules become.
func (f *FS) CopyIn(ctx context.Context, p string, r io.Reader, perm fs.FileMode) (int64, error) {
	const op = "fs.copyin"
	if perm&^fs.ModePerm != 0 {
		return 0, backend.Errorf(backend.ErrInvalid, op, p, "perm may only hold permission bits, got %v", perm)
	}
	res, err := f.Write(ctx, backend.WriteRequest{Path: p, Mode: backend.WriteCreate})
	if err != nil {
		if errors.Is(err, backend.ErrExist) {
			return 0, backend.Errorf(backend.ErrExist, op, p, "already exists")
		}
		return 0, err
	}
	root, release, err := f.acquire(ctx, op, p)
	if err != nil {
		return 0, err
	}
	defer release()
	fd, err := openat2(root, res.Path, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY)
	if err != nil {
		return 0, mapErr(op, p, err)
	}
	file := os.NewFile(uintptr(fd), res.Path)
	defer file.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return 0, mapErr(op, p, err)
	}
	if fileType(&st) != syscall.S_IFREG { // swapped for something else meanwhile
		return 0, notRegular(op, p)
	}
	if err := f.own(fd, uint32(perm)); err != nil {
		return 0, mapErr(op, p, err)
	}
	n, err := io.Copy(file, copyInReader{ctx, r})
	if err == nil {
		err = file.Close()
	}
	if err != nil {
		if ctx.Err() != nil {
			return n, err
		}
		return n, mapErr(op, p, err)
	}
	return n, nil
}

// copyInReader stops a copy once its context ends.
type copyInReader struct {
	ctx context.Context
	r   io.Reader
}

func (c copyInReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

// Reopen points the FS at whatever directory its root path names now,
// for a workspace directory that was removed and made again: operations
// through the old descriptor would reach the removed directory. Operations
// in flight finish first; the root path itself does not change.
func (f *FS) Reopen() error {
	const op = "rootfs"
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fd < 0 {
		return backend.Errorf(backend.ErrUnavailable, op, f.root, "the filesystem is closed")
	}
	fd, err := syscall.Open(f.root, oPath|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return mapErr(op, f.root, err)
	}
	closeFD(f.fd)
	f.fd = fd
	return nil
}
