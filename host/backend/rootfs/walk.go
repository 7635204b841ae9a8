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

// glob is a compiled pattern: path.Match syntax per segment, "**" for any
// number of segments. Matching runs as a small NFA over the segments
// (states[i]: the first i pattern segments matched), so a pattern with many
// "**" cannot blow up, and a walk can prune directories no match can lie in.
type glob struct{ segs []string }

type globState []bool

func compileGlob(op, p, pattern string) (*glob, error) {
	g := &glob{}
	for _, s := range strings.Split(strings.TrimLeft(pattern, "/"), "/") {
		switch {
		case s == "" || s == ".":
			continue
		case s == "..":
			return nil, backend.Errorf(backend.ErrInvalid, op, p, "glob pattern %q may not contain ..", pattern)
		case s == "**" && len(g.segs) > 0 && g.segs[len(g.segs)-1] == "**":
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, backend.Errorf(backend.ErrInvalid, op, p, "invalid glob pattern %q: %v", pattern, err)
		}
		g.segs = append(g.segs, s)
	}
	if len(g.segs) == 0 {
		return nil, backend.Errorf(backend.ErrInvalid, op, p, "empty glob pattern: try \"**/*\" for every file")
	}
	return g, nil
}

func (g *glob) start() globState {
	s := make(globState, len(g.segs)+1)
	s[0] = true
	g.close(s)
	return s
}

// close adds the states reachable by letting a "**" match nothing.
func (g *glob) close(s globState) {
	for i, seg := range g.segs {
		if s[i] && seg == "**" {
			s[i+1] = true
		}
	}
}

// step consumes one path segment.
func (g *glob) step(s globState, name string) globState {
	next := make(globState, len(s))
	for i, seg := range g.segs {
		if !s[i] {
			continue
		}
		if seg == "**" {
			next[i] = true
		} else if ok, _ := path.Match(seg, name); ok {
			next[i+1] = true
		}
	}
	g.close(next)
	return next
}

// accepts: the segments consumed so far match the whole pattern.
func (s globState) accepts() bool { return s[len(s)-1] }

// alive: a longer path could still match.
func (s globState) alive() bool {
	for _, ok := range s[:len(s)-1] {
		if ok {
			return true
		}
	}
	return false
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
	v := &globVisitor{g: g, state: g.start(), res: &backend.GlobResult{Paths: []string{}}, max: f.limits.MaxResults}
	w := &walker{ctx: ctx}
	if err := w.walk(dir, rel, 0, v); err != nil && err != errStop {
		return backend.GlobResult{}, failed(ctx, op, req.Path, err)
	}
	v.res.Truncated = v.res.Truncated || w.deep
	return *v.res, nil
}

type globVisitor struct {
	g     *glob
	state globState
	res   *backend.GlobResult
	max   int
}

func (v *globVisitor) enter(e *entry) visitor {
	next := v.g.step(v.state, e.name)
	if !next.alive() {
		return nil
	}
	return &globVisitor{g: v.g, state: next, res: v.res, max: v.max}
}

func (v *globVisitor) file(e *entry) error {
	if !v.g.step(v.state, e.name).accepts() {
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
