//go:build linux && (amd64 || arm64)

package rootfs

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
)

// maxSymlinkHops bounds how many symlinks resolveFinal follows, as the
// kernel's own limit (40) does.
const maxSymlinkHops = 40

// lookup says how openDir and resolveFinal treat the path they are given.
type lookup struct {
	// create makes missing parent directories.
	create bool
	// dry creates nothing and accepts a missing parent: ResolvePath asks
	// where a write would land without making anything.
	dry bool
	// resolved: the path is one ResolvePath returned and a policy judged.
	// No symlink on it is followed (RESOLVE_NO_SYMLINKS; a last element
	// that is a symlink is ELOOP), so the operation changes the very entry
	// the policy saw, or fails if the workspace changed in between.
	resolved bool
}

// flags are the extra RESOLVE_* flags of the lookup.
func (l lookup) flags() uint64 {
	if l.resolved {
		return resolveNoSymlinks
	}
	return 0
}

// openDir opens the directory rel (root-relative) as an O_PATH descriptor,
// usable as the dirfd of *at calls. With l.create, missing directories are
// made one by one, each through a descriptor of its confined parent.
func (f *FS) openDir(root int, rel string, l lookup) (int, error) {
	fd, err := openat2Resolve(root, rel, oPath|syscall.O_DIRECTORY, l.flags())
	if err != syscall.ENOENT || !l.create || rel == "." {
		return fd, err
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		if fd, err = openat2Resolve(root, prefix, oPath|syscall.O_DIRECTORY, l.flags()); err != syscall.ENOENT {
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
		if err := f.mkdirIn(root, parent, parts[i], l); err != nil {
			return -1, err
		}
		// Reopen through the root: what was just made (or what a racing
		// process put there instead) is resolved under the same rules.
		if fd, err = openat2Resolve(root, prefix, oPath|syscall.O_DIRECTORY, l.flags()); err != nil {
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
func (f *FS) mkdirIn(root int, parent, name string, l lookup) error {
	pfd, err := openat2Resolve(root, parent, oPath|syscall.O_DIRECTORY, l.flags())
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
// the parent directory (creating it with l.create) and, while the last
// element is a symlink, follows it by hand, chroot-style, so that the name
// returned is never a symlink and the *at call on it never follows anything.
// It returns the parent descriptor (the caller closes it), the name, and the
// root-relative path of the entry. With l.dry a missing parent is no error:
// the descriptor is -1 and the path is where the entry would be.
func (f *FS) resolveFinal(root int, rel string, l lookup) (int, string, string, error) {
	for hops := 0; ; hops++ {
		if rel == "." {
			return -1, "", rel, syscall.EISDIR
		}
		dir, name := splitRel(rel)
		dfd, err := f.openDir(root, dir, l)
		if err == syscall.ENOENT && l.dry {
			return -1, name, rel, nil
		}
		if err != nil {
			return -1, "", rel, err
		}
		var st syscall.Stat_t
		err = lstatat(dfd, name, &st)
		if err == syscall.ENOENT || err == nil && fileType(&st) != syscall.S_IFLNK {
			return dfd, name, rel, nil
		}
		if err == nil && l.resolved { // a symlink where ResolvePath saw none
			err = syscall.ELOOP
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
		next := symlinkTarget(dir, target)
		if leadsOut(dir, target) && missingIn(root, next) {
			return -1, "", rel, &outsideLink{rel: rel, dir: dir, target: target}
		}
		rel = next
	}
}

// leadsOut reports whether a symlink's target, met in directory dir, is
// meant for the real file system: absolute, or climbing above the root.
func leadsOut(dir, target string) bool {
	return strings.HasPrefix(target, "/") || escapes(dir, target)
}

// missingIn reports whether rel names nothing under root.
func missingIn(root int, rel string) bool {
	fd, err := openat2(root, rel, oPath)
	if err == nil {
		closeFD(fd)
	}
	return err == syscall.ENOENT
}

// outsideLink is resolveFinal's error for a final symlink whose target is
// meant for the real file system and, counted from the workspace root,
// names nothing. Following it chroot-style would create that name inside
// the workspace (hn -> /etc/hostname would make <root>/etc/hostname) and
// report a success the shell contradicts, so the write is refused and
// mapErr says where the link leads.
type outsideLink struct{ rel, dir, target string }

func (e *outsideLink) Error() string {
	return "symbolic link " + e.rel + " leads outside the workspace (to " + e.target + ")"
}

// ResolvePath returns the root-relative path, free of symlinks, of the
// entry a mutation of p would change, resolved as every operation here
// resolves it (chroot-style: an absolute symlink /x means <root>/x). With
// followLast (write, edit) a symlink at the end is followed, as a write
// through it would be; without (remove) the last element is the entry
// itself. Parents that do not exist yet are appended as named. Nothing is
// created. The kernel shows this path to policies, then has the mutation
// act on it with a lookup that follows no symlink (WriteRequest.Resolved),
// so what a policy judged is what changes.
func (f *FS) ResolvePath(ctx context.Context, p string, followLast bool) (string, error) {
	const op = "fs.resolve"
	root, rel, release, err := f.enter(ctx, op, p)
	if err != nil {
		return "", err
	}
	defer release()
	if rel == "." {
		return rel, nil
	}
	dir, name := splitRel(rel)
	if followLast {
		dfd, last, at, err := f.resolveFinal(root, rel, lookup{dry: true})
		if err == syscall.EISDIR && at == "." {
			return ".", nil // a symlink to the root: writes to it fail as writes to "/" do
		}
		if err != nil {
			return "", mapErr(op, p, err)
		}
		if dfd >= 0 {
			defer closeFD(dfd)
			real, err := f.fdPath(op, p, dfd)
			if err != nil {
				return "", err
			}
			return joinRel(real, last), nil
		}
		dir, name = splitRel(at)
	}
	real, err := f.existingDir(op, p, root, dir)
	if err != nil {
		return "", err
	}
	return joinRel(real, name), nil
}

// existingDir resolves dir as far as it exists and appends the rest as
// named: where a write that creates the missing directories would put
// them. A symlink on dir that leads nowhere reachable is an error: the
// mutation, which follows no symlink, could never get past it.
func (f *FS) existingDir(op, p string, root int, dir string) (string, error) {
	var missing []string
	for {
		fd, err := openat2(root, dir, oPath|syscall.O_DIRECTORY)
		if err == syscall.ENOENT && len(missing) == 0 {
			// Once, for the whole of dir: every prefix is looked at.
			if lerr := f.brokenLink(root, op, p, dir); lerr != nil {
				return "", lerr
			}
		}
		if err == syscall.ENOENT && dir != "." {
			parent, name := splitRel(dir)
			missing = append(missing, name)
			dir = parent
			continue
		}
		if err != nil {
			return "", mapErr(op, p, err)
		}
		real, err := f.fdPath(op, p, fd)
		closeFD(fd)
		if err != nil {
			return "", err
		}
		for i := len(missing) - 1; i >= 0; i-- {
			real = joinRel(real, missing[i])
		}
		return real, nil
	}
}

// fdPath returns the root-relative path the kernel knows an open
// descriptor by: symlinks already resolved, without re-walking them in
// user space.
func (f *FS) fdPath(op, p string, fd int) (string, error) {
	host, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return "", backend.Errorf(backend.ErrUnavailable, op, p, "cannot read /proc/self/fd (is /proc mounted?): %v", err)
	}
	if host == f.root {
		return ".", nil
	}
	if !strings.HasPrefix(host, f.root+"/") {
		// Only possible if the root itself was moved or is reachable
		// through another mount; refuse rather than name a path outside.
		return "", backend.Errorf(backend.ErrInvalid, op, p, "resolves to %s, outside the workspace root %s", host, f.root)
	}
	return host[len(f.root)+1:], nil
}

// openRegular opens rel for reading, following symlinks inside the root,
// and refuses anything but a regular file. O_NONBLOCK makes opening a FIFO
// return at once, so the fstat check runs instead of a hang.
func (f *FS) openRegular(root int, op, p, rel string) (*os.File, *syscall.Stat_t, error) {
	fd, err := openat2(root, rel, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY)
	if err != nil {
		return nil, nil, f.explain(root, op, p, rel, err)
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
