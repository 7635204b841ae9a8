//go:build linux && (amd64 || arm64)

package rootfs

import (
	"os"
	"strings"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
)

// maxSymlinkHops bounds how many symlinks resolveFinal follows, as the
// kernel's own limit (40) does.
const maxSymlinkHops = 40

// openDir opens the directory rel (root-relative) as an O_PATH descriptor,
// usable as the dirfd of *at calls. With create, missing directories are
// made one by one, each through a descriptor of its confined parent.
func (f *FS) openDir(root int, rel string, create bool) (int, error) {
	fd, err := openat2(root, rel, oPath|syscall.O_DIRECTORY)
	if err != syscall.ENOENT || !create || rel == "." {
		return fd, err
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		if fd, err = openat2(root, prefix, oPath|syscall.O_DIRECTORY); err != syscall.ENOENT {
			if err != nil {
				return -1, err
			}
			if i == len(parts)-1 {
				return fd, nil
			}
			closeFD(fd)
			continue
		}
		parent := "."
		if i > 0 {
			parent = strings.Join(parts[:i], "/")
		}
		if err := f.mkdirIn(root, parent, parts[i]); err != nil {
			return -1, err
		}
		// Reopen through the root: what was just made (or what a racing
		// process put there instead) is resolved under the same rules.
		if fd, err = openat2(root, prefix, oPath|syscall.O_DIRECTORY); err != nil {
			return -1, err
		}
		if i == len(parts)-1 {
			return fd, nil
		}
		closeFD(fd)
	}
	return -1, syscall.ENOENT // unreachable: the loop returns on its last part
}

// mkdirIn creates directory name in parent with the configured mode and
// owner. An existing entry is left alone for the caller to reopen.
func (f *FS) mkdirIn(root int, parent, name string) error {
	pfd, err := openat2(root, parent, oPath|syscall.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer closeFD(pfd)
	if err := syscall.Mkdirat(pfd, name, f.dirMode); err != nil {
		if err == syscall.EEXIST {
			return nil
		}
		return err
	}
	// Fix mode and owner through a descriptor of the new directory itself,
	// opened without following: fchmodat would follow a symlink swapped in
	// meanwhile, and outside the root.
	dfd, err := openat(pfd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer closeFD(dfd)
	return f.own(dfd, f.dirMode)
}

// own gives a created file or directory its exact mode and the configured
// owner.
func (f *FS) own(fd int, mode uint32) error {
	if err := syscall.Fchmod(fd, mode); err != nil {
		return err
	}
	if f.owner != nil {
		return syscall.Fchown(fd, f.owner.UID, f.owner.GID)
	}
	return nil
}

// resolveFinal finds the directory entry a write to rel lands on: it opens
// the parent directory (creating it when mkParents) and, while the last
// element is a symlink, follows it by hand, chroot-style, so that the name
// returned is never a symlink and the *at call on it never follows anything.
// It returns the parent descriptor (the caller closes it), the name, and the
// root-relative path of the entry.
func (f *FS) resolveFinal(root int, rel string, mkParents bool) (int, string, string, error) {
	for hops := 0; ; hops++ {
		if rel == "." {
			return -1, "", rel, syscall.EISDIR
		}
		dir, name := splitRel(rel)
		dfd, err := f.openDir(root, dir, mkParents)
		if err != nil {
			return -1, "", rel, err
		}
		var st syscall.Stat_t
		err = lstatat(dfd, name, &st)
		if err == syscall.ENOENT || err == nil && fileType(&st) != syscall.S_IFLNK {
			return dfd, name, rel, nil
		}
		if err != nil {
			closeFD(dfd)
			return -1, "", rel, err
		}
		if hops == maxSymlinkHops {
			closeFD(dfd)
			return -1, "", rel, syscall.ELOOP
		}
		target, err := readlinkat(dfd, name)
		closeFD(dfd)
		if err != nil {
			return -1, "", rel, err
		}
		// Lexical: "x/../y" in a target is taken textually, which can differ
		// from the kernel's walk when x is itself a symlink, but can never
		// leave the root.
		rel = symlinkTarget(dir, target)
	}
}

// openRegular opens rel for reading, following symlinks inside the root,
// and refuses anything but a regular file. O_NONBLOCK makes opening a FIFO
// return at once, so the fstat check runs instead of a hang.
func (f *FS) openRegular(root int, op, p, rel string) (*os.File, *syscall.Stat_t, error) {
	fd, err := openat2(root, rel, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY)
	if err != nil {
		return nil, nil, mapErr(op, p, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		closeFD(fd)
		return nil, nil, mapErr(op, p, err)
	}
	switch fileType(&st) {
	case syscall.S_IFREG:
	case syscall.S_IFDIR:
		closeFD(fd)
		return nil, nil, backend.Errorf(backend.ErrInvalid, op, p, "is a directory: list it, or name a file inside it")
	default:
		closeFD(fd)
		return nil, nil, notRegular(op, p)
	}
	return os.NewFile(uintptr(fd), rel), &st, nil
}

// Interface guards
var _ backend.Filesystem = (*FS)(nil)
