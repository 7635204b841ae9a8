//go:build linux && (amd64 || arm64)

package rootfs

import (
	"bytes"
	"context"
	"os"
	"path"
	"regexp"
	"strings"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/pathglob"
)

const (
	// binarySniffBytes: a NUL byte in this much of a file's head marks it
	// binary, as git and grep decide.
	binarySniffBytes = 8 << 10
	// maxMatchText bounds the text reported for one matching line, so a
	// match in a minified file does not flood the answer.
	maxMatchText = 2 << 10
)

// Grep searches the text files under req.Path (a directory, or one file)
// for an RE2 pattern and returns matching lines sorted by (path, line),
// capped at Limits.MaxResults matches and Limits.MaxReadBytes of text.
// Binary files and symlinks are skipped.
func (f *FS) Grep(ctx context.Context, req backend.GrepRequest) (backend.GrepResult, error) {
	const op = "fs.grep"
	re, err := regexp.Compile(req.Pattern)
	if err != nil {
		return backend.GrepResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path, "invalid regular expression: %v", err)
	}
	v := &grepVisitor{
		re: re, max: f.limits.MaxResults, budget: f.limits.MaxReadBytes,
		res: &backend.GrepResult{Matches: []backend.GrepMatch{}},
		lr:  newLineReader(nil), lineMax: f.limits.MaxReadBytes,
	}
	if req.Glob != "" {
		if v.filter, err = compileGlob(op, req.Path, req.Glob); err != nil {
			return backend.GrepResult{}, err
		}
		v.baseOnly = !strings.Contains(strings.Trim(req.Glob, "/"), "/")
	}
	root, rel, release, err := f.enter(ctx, op, req.Path)
	if err != nil {
		return backend.GrepResult{}, err
	}
	defer release()
	v.ctx = ctx
	if fi, err := f.statIn(root, rel); err == nil && fi.Kind == backend.KindFile {
		file, _, err := f.openRegular(root, op, req.Path, rel)
		if err != nil {
			return backend.GrepResult{}, err
		}
		defer file.Close()
		if v.filter == nil || v.filter.Step(v.filter.Start(), path.Base(rel)).Accepts() {
			err = v.search(file, rel)
		}
		return v.finish(op, req.Path, err, false)
	}
	dir, err := f.openListable(root, op, req.Path, rel)
	if err != nil {
		return backend.GrepResult{}, err
	}
	defer dir.Close()
	if v.filter != nil {
		v.state = v.filter.Start()
	}
	w := &walker{ctx: ctx}
	err = w.walk(dir, rel, 0, v)
	return v.finish(op, req.Path, err, w.deep)
}

// statIn stats rel following symlinks inside the root.
func (f *FS) statIn(root int, rel string) (backend.FileInfo, error) {
	fd, err := openat2(root, rel, oPath)
	if err != nil {
		return backend.FileInfo{}, err
	}
	defer closeFD(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return backend.FileInfo{}, err
	}
	return info(rel, &st), nil
}

type grepVisitor struct {
	ctx      context.Context
	re       *regexp.Regexp
	filter   *pathglob.Pattern
	baseOnly bool           // the filter matches base names only
	state    pathglob.State // of filter over the directories entered
	max      int
	budget   int // bytes of match text left
	lineMax  int // bytes of a line matched against
	res      *backend.GrepResult
	lr       *lineReader
}

func (v *grepVisitor) finish(op, p string, err error, deep bool) (backend.GrepResult, error) {
	if err != nil && err != errStop {
		return backend.GrepResult{}, failed(v.ctx, op, p, err)
	}
	v.res.Truncated = v.res.Truncated || deep
	return *v.res, nil
}

func (v *grepVisitor) enter(e *entry) visitor {
	if v.filter == nil || v.baseOnly {
		return v
	}
	next := v.filter.Step(v.state, e.name)
	if !next.Alive() {
		return nil
	}
	c := *v
	c.state = next
	return &c
}

func (v *grepVisitor) file(e *entry) error {
	if v.filter != nil {
		state := v.state
		if v.baseOnly {
			state = v.filter.Start()
		}
		if !v.filter.Step(state, e.name).Accepts() {
			return nil
		}
	}
	fd, err := openat(e.dirfd, e.name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil // gone, or swapped for a symlink or FIFO, since the walk saw it
	}
	file := os.NewFile(uintptr(fd), e.rel)
	defer file.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || fileType(&st) != syscall.S_IFREG {
		return nil
	}
	return v.search(file, e.rel)
}

// search appends the matching lines of one file; errStop once the cap is
// reached.
func (v *grepVisitor) search(file *os.File, rel string) error {
	// Through ctxReader: a file of one endless line (a sparse file past a
	// text head) stops at the deadline, not after its last byte.
	br := v.lr.reset(&ctxReader{ctx: v.ctx, r: file})
	if head, _ := br.Peek(binarySniffBytes); bytes.IndexByte(head, 0) >= 0 {
		return v.ctx.Err()
	}
	for n := 1; ; n++ {
		line, _, err := v.lr.next(v.lineMax)
		if err != nil {
			// io.EOF, or a read error: what was read is reported. The
			// context's end is not a read error: it ends the whole search.
			return v.ctx.Err()
		}
		if !v.re.Match(line) {
			continue
		}
		if len(v.res.Matches) == v.max || v.budget == 0 {
			v.res.Truncated = true
			return errStop
		}
		text := line[:min(len(line), maxMatchText, v.budget)]
		v.budget -= len(text)
		v.res.Matches = append(v.res.Matches, backend.GrepMatch{
			Path: rel, Line: n, Text: strings.ToValidUTF8(string(text), "\uFFFD"),
		})
	}
}

// Interface guards
var _ visitor = (*grepVisitor)(nil)
