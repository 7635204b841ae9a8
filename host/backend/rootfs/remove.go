//go:build linux && (amd64 || arm64)

package rootfs

import (
	"context"
	"io"
	"os"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
)

// Remove deletes a file, a symlink (never its target) or a directory; a
// non-empty directory needs Recursive. The root is never removed.
func (f *FS) Remove(ctx context.Context, req backend.RemoveRequest) (backend.RemoveResult, error) {
	const op = "fs.remove"
	rel, err := cleanPath(op, req.Path)
	if err != nil {
		return backend.RemoveResult{}, err
	}
	target, l, err := resolvedTarget(op, req.Path, rel, req.Resolved)
	if err != nil {
		return backend.RemoveResult{}, err
	}
	if rel == "." || target == "." {
		return backend.RemoveResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path,
			"refusing to remove the workspace root: remove the entries inside it instead")
	}
	root, release, err := f.acquire(ctx, op, req.Path)
	if err != nil {
		return backend.RemoveResult{}, err
	}
	defer release()
	dir, name := splitRel(target)
	dfd, err := openat2Resolve(root, dir, oPath|syscall.O_DIRECTORY, l.flags())
	if err != nil {
		return backend.RemoveResult{}, f.lookupErr(root, op, req.Path, target, l, err)
	}
	defer closeFD(dfd)
	var st syscall.Stat_t
	if err := lstatat(dfd, name, &st); err != nil {
		return backend.RemoveResult{}, mapErr(op, req.Path, err)
	}
	if fileType(&st) != syscall.S_IFDIR {
		if err := unlinkat(dfd, name, 0); err != nil {
			return backend.RemoveResult{}, mapErr(op, req.Path, err)
		}
		return backend.RemoveResult{Removed: 1}, nil
	}
	if !req.Recursive {
		if err := unlinkat(dfd, name, atRemoveDir); err != nil {
			return backend.RemoveResult{}, mapErr(op, req.Path, err)
		}
		return backend.RemoveResult{Removed: 1}, nil
	}
	n, err := removeTree(ctx, dfd, name, 0)
	if err != nil {
		return backend.RemoveResult{Removed: n}, failed(ctx, op, req.Path, err)
	}
	return backend.RemoveResult{Removed: n}, nil
}

// removeTree removes directory name in parent with everything in it, never
// following a symlink, and returns how many entries it removed.
func removeTree(ctx context.Context, parent int, name string, depth int) (int, error) {
	if depth > maxDepth {
		return 0, backend.Errorf(backend.ErrInvalid, "fs.remove", name, "the directory tree is deeper than %d levels", maxDepth)
	}
	removed := 0
	for attempt := 0; ; attempt++ {
		fd, err := openat(parent, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
		if err == syscall.ENOTDIR || err == syscall.ELOOP { // replaced by a file or symlink meanwhile
			return removed + 1, unlinkat(parent, name, 0)
		}
		if err != nil {
			return removed, err
		}
		dir := os.NewFile(uintptr(fd), name)
		n, err := removeEntries(ctx, dir, depth)
		removed += n
		dir.Close()
		if err != nil {
			return removed, err
		}
		err = unlinkat(parent, name, atRemoveDir)
		if err == nil {
			return removed + 1, nil
		}
		// Entries created while we were deleting: go round again, a few
		// times, rather than chase a process that keeps writing.
		if err != syscall.ENOTEMPTY || attempt == 3 {
			return removed, err
		}
	}
}

// removeEntries empties an open directory, batch by batch.
func removeEntries(ctx context.Context, dir *os.File, depth int) (int, error) {
	removed := 0
	dfd := int(dir.Fd())
	for {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		names, err := dir.Readdirnames(1024)
		for _, child := range names {
			if err := ctx.Err(); err != nil {
				return removed, err
			}
			var st syscall.Stat_t
			if err := lstatat(dfd, child, &st); err != nil {
				if err == syscall.ENOENT {
					continue
				}
				return removed, err
			}
			if fileType(&st) == syscall.S_IFDIR {
				n, err := removeTree(ctx, dfd, child, depth+1)
				removed += n
				if err != nil {
					return removed, err
				}
				continue
			}
			if err := unlinkat(dfd, child, 0); err != nil && err != syscall.ENOENT {
				return removed, err
			}
			removed++
		}
		if err == io.EOF || len(names) == 0 {
			return removed, nil
		}
		if err != nil {
			return removed, err
		}
	}
}
