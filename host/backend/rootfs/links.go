//go:build linux && (amd64 || arm64)

package rootfs

import (
	"path"
	"strings"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
)

// brokenLink explains a path that could not be resolved because one of its
// elements is a symlink leading nowhere the file tools can go: an absolute
// target (the commands in the workspace follow it to the real file system;
// these tools see only the root, where it names nothing), a relative one
// climbing above the root, or one whose target is missing. It returns nil
// when no element of rel is such a link, and the caller reports its own
// error.
//
// Why: without it the model is told "no such file" about a name that the
// shell lists and reads, or, for a write under a dangling directory link,
// that the workspace changed under it, so it retries forever. The message
// is final and says where the link leads and what to do instead.
//
// It runs only after a lookup failed, so the common path pays nothing, and
// it only names what it found: confinement is the kernel's (RESOLVE_IN_ROOT)
// whatever the workspace looks like by the time this looks.
func (f *FS) brokenLink(root int, op, p, rel string) error {
	if rel == "." {
		return nil
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		fd, err := openat2(root, prefix, oPath)
		if err == nil {
			closeFD(fd)
			continue
		}
		if err != syscall.ENOENT {
			return nil
		}
		// prefix does not resolve but its parent did: is its last element
		// a symlink?
		dir, name := splitRel(prefix)
		dfd, err := openat2(root, dir, oPath|syscall.O_DIRECTORY)
		if err != nil {
			return nil
		}
		target, err := readlinkat(dfd, name)
		closeFD(dfd)
		if err != nil {
			return nil // not a symlink (EINVAL), or gone: plainly missing
		}
		return linkError(op, p, prefix, dir, target)
	}
	return nil
}

// linkError is the message for the symlink at rel (in directory dir) whose
// target the file tools cannot reach. The kind is ErrNotFound, as for any
// path that names nothing the tools can reach; the message says why.
func linkError(op, p, rel, dir, target string) error {
	const instead = "the file tools see only the workspace and do not follow it there; " +
		"use the shell, where the link leads where it says, or work on files inside the workspace"
	switch {
	case strings.HasPrefix(target, "/"):
		// The tools take an absolute target as counted from the workspace
		// root (chroot-style), and there it names nothing.
		return backend.Errorf(backend.ErrNotFound, op, p,
			"no such file or directory in the workspace: %s is a symbolic link that leads outside the workspace (to %s); %s",
			rel, target, instead)
	case escapes(dir, target):
		return backend.Errorf(backend.ErrNotFound, op, p,
			"no such file or directory in the workspace: %s is a symbolic link that climbs out of the workspace (to %s); %s",
			rel, target, instead)
	}
	return backend.Errorf(backend.ErrNotFound, op, p,
		"no such file or directory: %s is a symbolic link to %s, which does not exist", rel, target)
}

// escapes reports whether a relative symlink target, met in directory dir
// (root-relative), climbs above the root.
func escapes(dir, target string) bool {
	joined := path.Join(dir, target)
	return joined == ".." || strings.HasPrefix(joined, "../")
}

// explain returns brokenLink's error when there is one, else err mapped as
// usual. For lookups of a path as the request gave it (ENOENT).
func (f *FS) explain(root int, op, p, rel string, err error) error {
	if err == syscall.ENOENT {
		if e := f.brokenLink(root, op, p, rel); e != nil {
			return e
		}
	}
	return mapErr(op, p, err)
}
