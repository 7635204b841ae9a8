//go:build linux && (amd64 || arm64)

package rootfs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	text, st, err := f.readEditable(ctx, op, req.Path, dfd, name)
	if err != nil {
		return backend.EditResult{}, err
	}
	out, n, err := replaced(op, req, text)
	if err != nil {
		return backend.EditResult{}, err
	}
	if err := f.replaceFile(ctx, dfd, name, out, &st); err != nil {
		return backend.EditResult{}, failed(ctx, op, req.Path, err)
	}
	return backend.EditResult{Path: rel, Replacements: n}, nil
}

// readEditable reads name in dfd, the file an edit changes (p as
// requested): a regular file of at most maxEditBytes, never through a
// symlink. Its stat is what the replacement keeps of it.
func (f *FS) readEditable(ctx context.Context, op, p string, dfd int, name string) (string, syscall.Stat_t, error) {
	var st syscall.Stat_t
	fd, err := openat(dfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", st, f.editErr(op, p, err)
	}
	file := os.NewFile(uintptr(fd), name)
	defer file.Close()
	if err := syscall.Fstat(fd, &st); err != nil {
		return "", st, mapErr(op, p, err)
	}
	switch {
	case fileType(&st) == syscall.S_IFDIR:
		return "", st, backend.Errorf(backend.ErrInvalid, op, p, "is a directory: name a file inside it")
	case fileType(&st) != syscall.S_IFREG:
		return "", st, notRegular(op, p)
	case st.Size > maxEditBytes:
		return "", st, backend.Errorf(backend.ErrInvalid, op, p,
			"the file is %d bytes, over the %d bytes edit can load: change it with a shell command", st.Size, maxEditBytes)
	}
	data, err := io.ReadAll(io.LimitReader(&ctxReader{ctx: ctx, r: file}, maxEditBytes+1))
	if err != nil {
		return "", st, failed(ctx, op, p, err)
	}
	if len(data) > maxEditBytes { // it grew since the fstat
		return "", st, backend.Errorf(backend.ErrInvalid, op, p,
			"the file is over the %d bytes edit can load: change it with a shell command", maxEditBytes)
	}
	if err := ctx.Err(); err != nil {
		return "", st, Stopped(op, p, err)
	}
	return string(data), st, nil
}

// replaced is text with req's replacement made, and how many occurrences
// it replaced: exactly one, or every one with ReplaceAll.
func replaced(op string, req backend.EditRequest, text string) (string, int, error) {
	n := strings.Count(text, req.Old)
	switch {
	case n == 0:
		return "", 0, backend.Errorf(backend.ErrInvalid, op, req.Path,
			"old string not found: read the file and copy the exact text, whitespace included")
	case n > 1 && !req.ReplaceAll:
		return "", 0, backend.Errorf(backend.ErrInvalid, op, req.Path,
			"old string occurs %d times: make it unique or set replace_all", n)
	}
	if !req.ReplaceAll {
		n = 1
	}
	// Bound the result before building it: replacing every "a" of a
	// 64 MiB file with 48000 characters would ask for terabytes.
	if size := int64(len(text)) + int64(n)*(int64(len(req.New))-int64(len(req.Old))); size > maxEditBytes {
		return "", 0, backend.Errorf(backend.ErrInvalid, op, req.Path,
			"the edited file would be %d bytes, over the %d bytes edit can write: replace fewer occurrences, or use a shell command", size, maxEditBytes)
	}
	return strings.Replace(text, req.Old, req.New, n), n, nil
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
