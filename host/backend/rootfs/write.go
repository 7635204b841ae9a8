//go:build linux && (amd64 || arm64)

package rootfs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
)

// maxEditBytes bounds the size of a file Edit loads into memory. Edits are
// meant for source and text files; a model that needs to change a larger
// file can use the shell.
const maxEditBytes = 64 << 20

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

// Edit replaces Old with New in a regular file: exactly one occurrence, or
// all of them with ReplaceAll. The new content is written to a temporary
// file in the same directory and renamed over the old one, so a reader sees
// either version, never half of one; mode and (where permitted) owner are
// kept.
func (f *FS) Edit(ctx context.Context, req backend.EditRequest) (backend.EditResult, error) {
	const op = "fs.edit"
	if req.Old == "" {
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path, "old string is empty: give the exact text to replace")
	}
	if err := f.limits.CheckWrite(op, req.Path, req.New); err != nil {
		return backend.EditResult{}, err
	}
	rel, err := cleanPath(op, req.Path)
	if err != nil {
		return backend.EditResult{}, err
	}
	target, l, err := resolvedTarget(op, req.Path, rel, req.Resolved)
	if err != nil {
		return backend.EditResult{}, err
	}
	root, release, err := f.acquire(ctx, op, req.Path)
	if err != nil {
		return backend.EditResult{}, err
	}
	defer release()
	dfd, name, _, err := f.resolveFinal(root, target, l)
	if err != nil {
		if err == syscall.ENOENT {
			return backend.EditResult{}, f.editErr(op, req.Path, err)
		}
		return backend.EditResult{}, f.lookupErr(root, op, req.Path, target, l, err)
	}
	defer closeFD(dfd)
	fd, err := openat(dfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return backend.EditResult{}, f.editErr(op, req.Path, err)
	}
	file := os.NewFile(uintptr(fd), name)
	defer file.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return backend.EditResult{}, mapErr(op, req.Path, err)
	}
	switch {
	case fileType(&st) == syscall.S_IFDIR:
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path, "is a directory: name a file inside it")
	case fileType(&st) != syscall.S_IFREG:
		return backend.EditResult{}, notRegular(op, req.Path)
	case st.Size > maxEditBytes:
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path,
			"the file is %d bytes, over the %d bytes edit can load: change it with a shell command", st.Size, maxEditBytes)
	}
	data, err := io.ReadAll(io.LimitReader(&ctxReader{ctx: ctx, r: file}, maxEditBytes+1))
	if err != nil {
		return backend.EditResult{}, failed(ctx, op, req.Path, err)
	}
	if len(data) > maxEditBytes { // it grew since the fstat
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path,
			"the file is over the %d bytes edit can load: change it with a shell command", maxEditBytes)
	}
	if err := ctx.Err(); err != nil {
		return backend.EditResult{}, Stopped(op, req.Path, err)
	}
	text := string(data)
	n := strings.Count(text, req.Old)
	switch {
	case n == 0:
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path,
			"old string not found: read the file and copy the exact text, whitespace included")
	case n > 1 && !req.ReplaceAll:
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path,
			"old string occurs %d times: make it unique or set replace_all", n)
	}
	if !req.ReplaceAll {
		n = 1
	}
	// Bound the result before building it: replacing every "a" of a
	// 64 MiB file with 48000 characters would ask for terabytes.
	if size := int64(len(text)) + int64(n)*(int64(len(req.New))-int64(len(req.Old))); size > maxEditBytes {
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path,
			"the edited file would be %d bytes, over the %d bytes edit can write: replace fewer occurrences, or use a shell command", size, maxEditBytes)
	}
	out := strings.Replace(text, req.Old, req.New, n)
	if err := f.replaceFile(ctx, dfd, name, out, &st); err != nil {
		return backend.EditResult{}, failed(ctx, op, req.Path, err)
	}
	return backend.EditResult{Path: rel, Replacements: n}, nil
}

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

func (f *FS) editErr(op, p string, err error) error {
	if err == syscall.ENOENT {
		return backend.Errorf(backend.ErrNotFound, op, p, "no such file: write it first")
	}
	return mapErr(op, p, err)
}

// replaceFile atomically replaces name in dfd with content, keeping the
// permissions of old and, when this process may, its owner.
func (f *FS) replaceFile(ctx context.Context, dfd int, name, content string, old *syscall.Stat_t) error {
	var suffix [8]byte
	_, _ = rand.Read(suffix[:])
	tmp := ".wai-edit-" + hex.EncodeToString(suffix[:])
	fd, err := openat(dfd, tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	file := os.NewFile(uintptr(fd), tmp)
	ok := false
	defer func() {
		if !ok {
			_ = unlinkat(dfd, tmp, 0)
		}
	}()
	err = writeAll(ctx, file, content)
	if err == nil {
		err = syscall.Fchmod(fd, old.Mode&0o7777)
	}
	if err == nil && (int(old.Uid) != os.Geteuid() || int(old.Gid) != os.Getegid()) {
		// Only root may give a file away; for anyone else the edited file
		// becomes theirs, as it would with any editor that renames.
		if cerr := syscall.Fchown(fd, int(old.Uid), int(old.Gid)); cerr != nil && cerr != syscall.EPERM {
			err = cerr
		}
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := syscall.Renameat(dfd, tmp, dfd, name); err != nil {
		return err
	}
	ok = true
	return nil
}

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
