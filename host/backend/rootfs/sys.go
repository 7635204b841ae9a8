//go:build linux && (amd64 || arm64)

package rootfs

import (
	"syscall"
	"unsafe"
)

// Flags the syscall package does not export for every architecture.
const (
	oPath               = 0x200000 // O_PATH
	atSymlinkNoFollow   = 0x100    // AT_SYMLINK_NOFOLLOW
	atRemoveDir         = 0x200    // AT_REMOVEDIR
	resolveNoMagicLinks = 0x02     // RESOLVE_NO_MAGICLINKS
	resolveNoSymlinks   = 0x04     // RESOLVE_NO_SYMLINKS
	resolveInRoot       = 0x10     // RESOLVE_IN_ROOT
)

// openHow is struct open_how of openat2(2).
type openHow struct {
	flags   uint64
	mode    uint64
	resolve uint64
}

// maxRetries bounds retries on EAGAIN, which openat2 returns with
// RESOLVE_IN_ROOT when a concurrent rename could have let ".." escape; the
// kernel asks the caller to try again rather than guess.
const maxRetries = 128

// openat2 opens path relative to dirfd with dirfd as the root of the
// resolution: "..", absolute paths and absolute symlinks never leave it, and
// /proc magic links are refused. O_CLOEXEC is always added.
func openat2(dirfd int, path string, flags int) (int, error) {
	return openat2Resolve(dirfd, path, flags, 0)
}

// openat2Resolve is openat2 with more RESOLVE_* flags (resolveNoSymlinks).
func openat2Resolve(dirfd int, path string, flags int, resolve uint64) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	how := openHow{flags: uint64(flags | syscall.O_CLOEXEC), resolve: resolveInRoot | resolveNoMagicLinks | resolve}
	for i := 0; ; i++ {
		fd, _, errno := syscall.Syscall6(sysOpenat2, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		switch {
		case errno == 0:
			return int(fd), nil
		case errno == syscall.EINTR || errno == syscall.EAGAIN && i < maxRetries:
			continue
		}
		return -1, errno
	}
}

// openat opens name relative to dirfd with the classic call; callers pass
// O_NOFOLLOW for names that must not be followed. O_CLOEXEC is always added.
func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := syscall.Openat(dirfd, name, flags|syscall.O_CLOEXEC, mode)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// lstatat stats name in dirfd without following it.
func lstatat(dirfd int, name string, st *syscall.Stat_t) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, errno := syscall.Syscall6(sysFstatat, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(st)), atSymlinkNoFollow, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// unlinkat removes name from dirfd; flags is 0 or atRemoveDir.
func unlinkat(dirfd int, name string, flags int) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, errno := syscall.Syscall(syscall.SYS_UNLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags))
	if errno != 0 {
		return errno
	}
	return nil
}

// readlinkat returns the target of the symlink name in dirfd.
func readlinkat(dirfd int, name string) (string, error) {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return "", err
	}
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, _, errno := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
		if errno != 0 {
			return "", errno
		}
		if int(n) < size {
			return string(buf[:n]), nil
		}
		if size >= 1<<16 { // PATH_MAX is 4096: a longer target cannot be followed anyway
			return "", syscall.ENAMETOOLONG
		}
	}
}

func closeFD(fd int) {
	if fd >= 0 {
		_ = syscall.Close(fd)
	}
}

// fileType returns the S_IFMT bits of a stat result.
func fileType(st *syscall.Stat_t) uint32 { return st.Mode & syscall.S_IFMT }

// notRegularAt reports whether name in dfd (not followed) is something
// other than a regular file, directory or symlink.
func notRegularAt(dfd int, name string) bool {
	var st syscall.Stat_t
	if lstatat(dfd, name, &st) != nil {
		return false
	}
	switch fileType(&st) {
	case syscall.S_IFREG, syscall.S_IFDIR, syscall.S_IFLNK:
		return false
	}
	return true
}
