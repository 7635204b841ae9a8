//go:build linux && (amd64 || arm64)

package rootfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Owner is the user and group that files and directories created through the
// filesystem are given. The podman backend needs it: its container runs as
// 65534, and what the host side writes must stay writable in there.
type Owner struct {
	UID, GID int
}

// Options configure an FS. Zero values get defaults.
type Options struct {
	// Limits bound results and writes; zero means backend.DefaultLimits().
	Limits backend.Limits
	// Owner, when set, is chowned onto every file and directory created.
	Owner *Owner
	// FileMode and DirMode are the permissions of created files (default
	// 0644) and directories (default 0755), applied exactly: the process
	// umask does not narrow them.
	FileMode fs.FileMode
	DirMode  fs.FileMode
}

// FS is a backend.Filesystem confined to one host directory. It is safe for
// concurrent use.
type FS struct {
	// mu guards fd: operations hold it shared, Close exclusively, so a
	// descriptor number is never used after it was closed and reused.
	mu       sync.RWMutex
	fd       int    // O_PATH descriptor of the root; -1 once closed
	root     string // the root's real host path
	limits   backend.Limits
	owner    *Owner
	fileMode uint32
	dirMode  uint32
}

// Interface guards
var (
	_ backend.Filesystem   = (*FS)(nil)
	_ backend.PathResolver = (*FS)(nil)
)

// New opens the directory root (which must exist) as a confined filesystem.
func New(root string, opts Options) (*FS, error) {
	const op = "rootfs"
	if root == "" {
		return nil, backend.Errorf(backend.ErrInvalid, op, "", "no root directory given")
	}
	if opts.Limits == (backend.Limits{}) {
		opts.Limits = backend.DefaultLimits()
	}
	if err := opts.Limits.Validate(); err != nil {
		return nil, err
	}
	if opts.FileMode == 0 {
		opts.FileMode = 0o644
	}
	if opts.DirMode == 0 {
		opts.DirMode = 0o755
	}
	if opts.FileMode&^fs.ModePerm != 0 || opts.DirMode&^fs.ModePerm != 0 {
		return nil, backend.Errorf(backend.ErrInvalid, op, root, "file and dir modes may only hold permission bits (0–0777), got %v and %v", opts.FileMode, opts.DirMode)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, backend.Errorf(backend.ErrInvalid, op, root, "cannot make the root path absolute: %v", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, backend.Errorf(backend.ErrNotFound, op, root, "the root directory does not exist: create it first")
		}
		return nil, fmt.Errorf("%s %s: %w", op, root, err)
	}
	fd, err := syscall.Open(real, oPath|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err == syscall.ENOTDIR {
		return nil, backend.Errorf(backend.ErrInvalid, op, root, "the root is not a directory")
	}
	if err != nil {
		return nil, mapErr(op, root, err)
	}
	// Probe openat2 once so a kernel without it (or a seccomp filter that
	// hides it) is reported here, not as a puzzling error on first use.
	probe, err := openat2(fd, ".", oPath|syscall.O_DIRECTORY)
	if err != nil {
		closeFD(fd)
		if err == syscall.ENOSYS || err == syscall.EPERM {
			return nil, backend.Errorf(backend.ErrUnavailable, op, root,
				"the kernel does not offer openat2 (Linux 5.6 or later, not blocked by seccomp, is needed)")
		}
		return nil, mapErr(op, root, err)
	}
	closeFD(probe)
	return &FS{
		fd: fd, root: real, limits: opts.Limits, owner: opts.Owner,
		fileMode: uint32(opts.FileMode), dirMode: uint32(opts.DirMode),
	}, nil
}

// Root returns the real host path of the root directory.
func (f *FS) Root() string { return f.root }

// Close releases the root descriptor; later calls fail with
// backend.ErrUnavailable. It waits for operations in flight.
func (f *FS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fd < 0 {
		return nil
	}
	err := syscall.Close(f.fd)
	f.fd = -1
	return err
}

// acquire checks ctx, holds the root descriptor for the operation and returns
// it with its release function.
func (f *FS) acquire(ctx context.Context, op, p string) (int, func(), error) {
	if err := ctx.Err(); err != nil {
		return -1, nil, Stopped(op, p, err)
	}
	f.mu.RLock()
	if f.fd < 0 {
		f.mu.RUnlock()
		return -1, nil, backend.Errorf(backend.ErrUnavailable, op, p, "the filesystem is closed")
	}
	return f.fd, f.mu.RUnlock, nil
}

// enter cleans p and acquires the root: the first step of every call on
// a path under it. The caller must release.
func (f *FS) enter(ctx context.Context, op, p string) (root int, rel string, release func(), err error) {
	rel, err = cleanPath(op, p)
	if err != nil {
		return -1, "", nil, err
	}
	root, release, err = f.acquire(ctx, op, p)
	return root, rel, release, err
}

// Resolve returns the real host path of the directory p inside the root,
// for use as a command's working directory. A path climbing above the root
// or naming something that is not a directory is ErrInvalid.
func (f *FS) Resolve(p string) (string, error) {
	const op = "resolve"
	root, rel, release, err := f.enter(context.Background(), op, p)
	if err != nil {
		return "", err
	}
	defer release()
	if rel == "." { // most commands run at the root: skip the kernel round trip
		return f.root, nil
	}
	fd, err := openat2(root, rel, oPath|syscall.O_DIRECTORY)
	if err != nil {
		if err == syscall.ENOTDIR {
			return "", backend.Errorf(backend.ErrInvalid, op, p, "not a directory")
		}
		return "", mapErr(op, p, err)
	}
	defer closeFD(fd)
	real, err := f.fdPath(op, p, fd)
	if err != nil {
		return "", err
	}
	return path.Join(f.root, real), nil
}

// cleanPath turns a request path into its root-relative form: no leading
// slash, no "." or ".." elements, "." for the root itself. ".." is resolved
// lexically, and a path that climbs above the root is refused rather than
// clamped: a model that writes "../x" has made a mistake worth telling it
// about.
func cleanPath(op, p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", backend.Errorf(backend.ErrInvalid, op, p, "the path contains a NUL byte")
	}
	c := path.Clean(strings.TrimLeft(p, "/"))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", backend.Errorf(backend.ErrInvalid, op, p, "the path climbs above the workspace root: use a path inside it")
	}
	return c, nil
}

// symlinkTarget turns the target of a symlink found in directory dir (both
// root-relative) into a root-relative path, chroot-style: an absolute target
// starts at the root and ".." stops there.
func symlinkTarget(dir, target string) string {
	if !strings.HasPrefix(target, "/") {
		target = path.Join("/", dir, target)
	}
	if rel := strings.TrimPrefix(path.Clean("/"+target), "/"); rel != "" {
		return rel
	}
	return "." // a link to the root (or above it, clamped)
}

// joinRel joins root-relative paths, keeping "." for the root.
func joinRel(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}

// splitRel splits a root-relative path (not ".") into its parent directory
// ("." for the root) and last element.
func splitRel(rel string) (string, string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ".", rel
	}
	return rel[:i], rel[i+1:]
}

// info builds a FileInfo from a stat result.
func info(rel string, st *syscall.Stat_t) backend.FileInfo {
	fi := backend.FileInfo{
		Path:    rel,
		Name:    path.Base(rel),
		Size:    st.Size,
		Mode:    fs.FileMode(st.Mode & 0o777),
		ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec),
	}
	switch fileType(st) {
	case syscall.S_IFREG:
		fi.Kind = backend.KindFile
	case syscall.S_IFDIR:
		fi.Kind, fi.Mode = backend.KindDir, fi.Mode|fs.ModeDir
	case syscall.S_IFLNK:
		fi.Kind, fi.Mode = backend.KindSymlink, fi.Mode|fs.ModeSymlink
	case syscall.S_IFIFO:
		fi.Kind, fi.Mode = backend.KindOther, fi.Mode|fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		fi.Kind, fi.Mode = backend.KindOther, fi.Mode|fs.ModeSocket
	case syscall.S_IFCHR:
		fi.Kind, fi.Mode = backend.KindOther, fi.Mode|fs.ModeDevice|fs.ModeCharDevice
	default:
		fi.Kind, fi.Mode = backend.KindOther, fi.Mode|fs.ModeDevice
	}
	if st.Mode&syscall.S_ISUID != 0 {
		fi.Mode |= fs.ModeSetuid
	}
	if st.Mode&syscall.S_ISGID != 0 {
		fi.Mode |= fs.ModeSetgid
	}
	if st.Mode&syscall.S_ISVTX != 0 {
		fi.Mode |= fs.ModeSticky
	}
	return fi
}

// notRegular is the error for a FIFO, socket or device met where a file
// was needed.
func notRegular(op, p string) error {
	return backend.Errorf(backend.ErrInvalid, op, p, "not a regular file (a FIFO, socket or device): only regular files are read or written")
}

// mapErr turns an errno into a backend error of the right kind, with a
// message that says what to do. Anything unexpected stays an internal error.
func mapErr(op, p string, err error) error {
	if out, ok := errors.AsType[*outsideLink](err); ok {
		return linkError(op, p, out.rel, out.dir, out.target)
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return fmt.Errorf("%s %s: %w", op, p, err)
	}
	kind, msg := backend.ErrInvalid, ""
	switch errno {
	case syscall.ENOENT:
		kind, msg = backend.ErrNotFound, "no such file or directory"
	case syscall.ENOTDIR:
		msg = "a parent of this path is a file, not a directory"
	case syscall.EEXIST:
		kind, msg = backend.ErrExist, "already exists"
	case syscall.EISDIR:
		msg = "is a directory"
	case syscall.ELOOP:
		msg = "too many levels of symbolic links (or a link into /proc)"
	case syscall.ENAMETOOLONG:
		msg = "the path is too long"
	case syscall.ENOTEMPTY:
		msg = "the directory is not empty: set recursive to remove it with everything in it"
	case syscall.ENXIO, syscall.ENODEV:
		return notRegular(op, p)
	case syscall.EXDEV:
		msg = "the path leaves the workspace"
	case syscall.EINVAL:
		msg = "invalid path"
	case syscall.EACCES, syscall.EPERM:
		kind, msg = backend.ErrPermission, "the host file system denied access"
	case syscall.EROFS:
		kind, msg = backend.ErrPermission, "the file system is read-only"
	case syscall.ENOSPC, syscall.EDQUOT:
		kind, msg = backend.ErrUnavailable, "no space left on the device (or quota exceeded)"
	default:
		return fmt.Errorf("%s %s: %w", op, p, err)
	}
	return &backend.Error{Kind: kind, Op: op, Path: p, Msg: msg}
}
