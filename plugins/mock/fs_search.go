package mock

import (
	"bytes"
	"context"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/pathglob"
)

// splitPattern splits a glob into segments and checks each one's syntax.
func splitPattern(op, pattern string) ([]string, error) {
	var segs []string
	for _, s := range strings.Split(pattern, "/") {
		if s == "" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, backend.Errorf(backend.ErrInvalid, op, "", "bad glob pattern %q: %v", pattern, err)
		}
		segs = append(segs, s)
	}
	return segs, nil
}

// walkFiles calls fn for every file under the clean path base (base
// itself when it is a file), with its path relative to base; the caller
// holds the read lock.
func walkFiles(n *node, base, rel string, fn func(p, rel string, n *node)) {
	if !n.dir {
		fn(base, rel, n)
		return
	}
	for name, c := range n.children {
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		walkFiles(c, join(base, name), r, fn)
	}
}

// Glob lists the files under req.Path matching req.Pattern, sorted.
func (f *FS) Glob(ctx context.Context, req backend.GlobRequest) (backend.GlobResult, error) {
	const op = "fs.glob"
	c, err := f.begin(ctx, op, req.Path)
	if err != nil {
		return backend.GlobResult{}, err
	}
	segs, err := splitPattern(op, req.Pattern)
	if err != nil {
		return backend.GlobResult{}, err
	}
	pat := pathglob.New(segs)
	if len(segs) == 0 {
		return backend.GlobResult{}, backend.Errorf(backend.ErrInvalid, op, "", "empty glob pattern")
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookup(op, c)
	if err != nil {
		return backend.GlobResult{}, err
	}
	if !n.dir {
		return backend.GlobResult{}, backend.Errorf(backend.ErrInvalid, op, c, "not a directory; glob searches under a directory")
	}
	var res backend.GlobResult
	walkFiles(n, c, "", func(p, rel string, _ *node) {
		if pat.Match(strings.Split(rel, "/")) {
			res.Paths = append(res.Paths, p)
		}
	})
	slices.Sort(res.Paths)
	if limit := f.ws.limits().MaxResults; len(res.Paths) > limit {
		res.Paths, res.Truncated = res.Paths[:limit], true
	}
	return res, nil
}

// binary reports whether data looks binary: a NUL byte near its start, as
// git and grep decide.
func binary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// Grep searches text files under req.Path for the regexp.
func (f *FS) Grep(ctx context.Context, req backend.GrepRequest) (backend.GrepResult, error) {
	const op = "fs.grep"
	c, err := f.begin(ctx, op, req.Path)
	if err != nil {
		return backend.GrepResult{}, err
	}
	re, err := regexp.Compile(req.Pattern)
	if err != nil {
		return backend.GrepResult{}, backend.Errorf(backend.ErrInvalid, op, "", "bad regular expression %q: %v", req.Pattern, err)
	}
	glob, err := splitPattern(op, req.Glob)
	if err != nil {
		return backend.GrepResult{}, err
	}
	filter := pathglob.New(glob)
	byName := req.Glob != "" && !strings.Contains(req.Glob, "/")
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookup(op, c)
	if err != nil {
		return backend.GrepResult{}, err
	}
	var res backend.GrepResult
	walkFiles(n, c, "", func(p, rel string, file *node) {
		if !n.dir {
			rel = path.Base(p)
		}
		switch {
		case binary(file.data):
			return
		case byName:
			if ok, _ := path.Match(req.Glob, path.Base(p)); !ok {
				return
			}
		case len(glob) > 0 && !filter.Match(strings.Split(rel, "/")):
			return
		}
		for i, line := range splitLines(file.data) {
			if re.MatchString(line) {
				res.Matches = append(res.Matches, backend.GrepMatch{Path: p, Line: i + 1, Text: line})
			}
		}
	})
	slices.SortStableFunc(res.Matches, func(a, b backend.GrepMatch) int { return strings.Compare(a.Path, b.Path) })
	if limit := f.ws.limits().MaxResults; len(res.Matches) > limit {
		res.Matches, res.Truncated = res.Matches[:limit], true
	}
	return res, nil
}
