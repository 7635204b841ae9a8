//go:build linux && (amd64 || arm64)

package rootfs

import (
	"context"
	"errors"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/pathglob"
)

// maxDepth bounds how deep walks and recursive removal descend; each level
// holds a descriptor, and no real workspace nests this deep.
const maxDepth = 256

// errStop ends a walk early without being an error.
var errStop = errors.New("stop walking")

// entry is one directory entry met during a walk.
type entry struct {
	dirfd int    // the directory holding it
	name  string // its name there
	rel   string // its root-relative path
	st    syscall.Stat_t
}

func (e *entry) isDir() bool { return fileType(&e.st) == syscall.S_IFDIR }

// visitor receives the entries of a walk.
type visitor interface {
	// enter returns the visitor of subdirectory e, or nil to skip it.
	enter(e *entry) visitor
	// file is called for each regular file; errStop ends the walk.
	file(e *entry) error
}

// walker visits a tree in the string order of its paths, never following a
// symlink: symlinks, FIFOs, sockets and devices are passed over.
type walker struct {
	ctx  context.Context
	deep bool // a directory was skipped for being deeper than maxDepth
}

// walk visits the entries of the open directory dir (root-relative rel).
func (w *walker) walk(dir *os.File, rel string, depth int, v visitor) error {
	dfd := int(dir.Fd())
	var names []string
	for {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		batch, err := dir.Readdirnames(1024)
		names = append(names, batch...)
		if err == io.EOF || len(batch) == 0 {
			break
		}
		if err != nil {
			return err
		}
	}
	entries := make([]entry, 0, len(names))
	for i, name := range names {
		if i&1023 == 0 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		e := entry{dirfd: dfd, name: name, rel: joinRel(rel, name)}
		if err := lstatat(dfd, name, &e.st); err != nil {
			if err == syscall.ENOENT {
				continue
			}
			return err
		}
		entries = append(entries, e)
	}
	// Sorting a directory's entries by name, with "/" appended to
	// directories, makes the depth-first walk produce paths in plain string
	// order, so a capped result is the first N of the sorted whole.
	key := func(e *entry) string {
		if e.isDir() {
			return e.name + "/"
		}
		return e.name
	}
	sort.Slice(entries, func(i, j int) bool { return key(&entries[i]) < key(&entries[j]) })
	for i := range entries {
		e := &entries[i]
		if err := w.ctx.Err(); err != nil {
			return err
		}
		switch fileType(&e.st) {
		case syscall.S_IFREG:
			if err := v.file(e); err != nil {
				return err
			}
		case syscall.S_IFDIR:
			child := v.enter(e)
			if child == nil {
				continue
			}
			if depth >= maxDepth {
				w.deep = true
				continue
			}
			fd, err := openat(dfd, e.name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
			if err != nil { // gone or swapped for a symlink since the stat
				continue
			}
			sub := os.NewFile(uintptr(fd), e.rel)
			err = w.walk(sub, e.rel, depth+1, child)
			sub.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// compileGlob checks a Glob or Grep pattern and compiles it
// (host/backend/pathglob: path.Match syntax per segment, "**" for any
// number of segments); a walk prunes the directories no match can lie in.
func compileGlob(op, p, pattern string) (*pathglob.Pattern, error) {
	var segs []string
	for _, s := range strings.Split(strings.TrimLeft(pattern, "/"), "/") {
		switch {
		case s == "" || s == ".":
			continue
		case s == "..":
			return nil, backend.Errorf(backend.ErrInvalid, op, p, "glob pattern %q may not contain ..", pattern)
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, backend.Errorf(backend.ErrInvalid, op, p, "invalid glob pattern %q: %v", pattern, err)
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return nil, backend.Errorf(backend.ErrInvalid, op, p, "empty glob pattern: try \"**/*\" for every file")
	}
	return pathglob.New(segs), nil
}

// Glob returns the regular files under req.Path whose path relative to it
// matches req.Pattern, sorted, capped at Limits.MaxResults. Symlinks are
// neither followed nor matched.
func (f *FS) Glob(ctx context.Context, req backend.GlobRequest) (backend.GlobResult, error) {
	const op = "fs.glob"
	g, err := compileGlob(op, req.Path, req.Pattern)
	if err != nil {
		return backend.GlobResult{}, err
	}
	root, rel, release, err := f.enter(ctx, op, req.Path)
	if err != nil {
		return backend.GlobResult{}, err
	}
	defer release()
	dir, err := f.openListable(root, op, req.Path, rel)
	if err != nil {
		return backend.GlobResult{}, err
	}
	defer dir.Close()
	v := &globVisitor{g: g, state: g.Start(), res: &backend.GlobResult{Paths: []string{}}, max: f.limits.MaxResults}
	w := &walker{ctx: ctx}
	if err := w.walk(dir, rel, 0, v); err != nil && err != errStop {
		return backend.GlobResult{}, failed(ctx, op, req.Path, err)
	}
	v.res.Truncated = v.res.Truncated || w.deep
	return *v.res, nil
}

type globVisitor struct {
	g     *pathglob.Pattern
	state pathglob.State
	res   *backend.GlobResult
	max   int
}

func (v *globVisitor) enter(e *entry) visitor {
	next := v.g.Step(v.state, e.name)
	if !next.Alive() {
		return nil
	}
	return &globVisitor{g: v.g, state: next, res: v.res, max: v.max}
}

func (v *globVisitor) file(e *entry) error {
	if !v.g.Step(v.state, e.name).Accepts() {
		return nil
	}
	if len(v.res.Paths) == v.max {
		v.res.Truncated = true
		return errStop
	}
	v.res.Paths = append(v.res.Paths, e.rel)
	return nil
}

// Interface guards
var _ visitor = (*globVisitor)(nil)
