package mock

import (
	"context"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/wai-dev/wai/host/backend"
)

// node is a file or a directory of the in-memory tree. The mock has no
// symlinks, FIFOs or devices: nothing in it can create them.
type node struct {
	dir      bool
	data     []byte
	children map[string]*node
	mod      time.Time
}

func newDir() *node { return &node{dir: true, children: map[string]*node{}, mod: time.Now()} }

func (n *node) info(p string) backend.FileInfo {
	fi := backend.FileInfo{Path: p, Name: path.Base(p), ModTime: n.mod}
	if n.dir {
		fi.Kind, fi.Mode = backend.KindDir, fs.ModeDir|0o755
	} else {
		fi.Kind, fi.Mode, fi.Size = backend.KindFile, 0o644, int64(len(n.data))
	}
	return fi
}

// FS is the mock's in-memory filesystem. Paths resolve the way the real
// backends resolve them: relative to the root or absolute inside it, ".."
// never climbing above the root.
type FS struct {
	ws   *Workspace
	mu   sync.RWMutex
	root *node
}

func newFS(w *Workspace) *FS { return &FS{ws: w, root: newDir()} }

// clean turns a request path into a clean root-relative path ("." for the
// root).
func clean(op, p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", backend.Errorf(backend.ErrInvalid, op, "", "path %q contains a NUL byte", p)
	}
	c := strings.TrimPrefix(path.Clean("/"+p), "/")
	if c == "" {
		return ".", nil
	}
	return c, nil
}

func segments(p string) []string {
	if p == "." {
		return nil
	}
	return strings.Split(p, "/")
}

// lookup finds the node at a clean path; the caller holds the lock.
func (f *FS) lookup(op, p string) (*node, error) {
	n := f.root
	for _, s := range segments(p) {
		if !n.dir {
			return nil, backend.Errorf(backend.ErrNotFound, op, p, "no such file or directory (a parent is a file)")
		}
		c, ok := n.children[s]
		if !ok {
			return nil, backend.Errorf(backend.ErrNotFound, op, p, "no such file or directory")
		}
		n = c
	}
	return n, nil
}

// begin checks the call and resolves its path.
func (f *FS) begin(ctx context.Context, op, p string) (string, error) {
	if err := f.ws.live(ctx, op); err != nil {
		return "", err
	}
	return clean(op, p)
}

// ResolvePath returns the entry a mutation of p would change. The mock has
// no symlinks, so that is p made clean.
func (f *FS) ResolvePath(ctx context.Context, p string, followLast bool) (string, error) {
	return f.begin(ctx, "fs.resolve", p)
}

// beginMutation is begin for a mutation: a resolved path from the kernel
// must be the one ResolvePath gives (with no symlinks, the clean path).
func (f *FS) beginMutation(ctx context.Context, op, p, resolved string) (string, error) {
	c, err := f.begin(ctx, op, p)
	if err != nil || resolved == "" {
		return c, err
	}
	if r, err := clean(op, resolved); err != nil || r != c {
		return "", backend.Errorf(backend.ErrInvalid, op, p, "the resolved path %q is not where %q leads: pass what ResolvePath returned", resolved, p)
	}
	return c, nil
}

// dir resolves a command's cwd: an existing directory, or ErrInvalid.
func (f *FS) dir(op, cwd string) (string, error) {
	p, err := clean(op, cwd)
	if err != nil {
		return "", err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookup(op, p)
	switch {
	case err != nil:
		return "", backend.Errorf(backend.ErrInvalid, op, cwd, "cwd does not exist in the workspace; create it first")
	case !n.dir:
		return "", backend.Errorf(backend.ErrInvalid, op, cwd, "cwd is a file, not a directory")
	}
	return p, nil
}

// Stat describes a path.
func (f *FS) Stat(ctx context.Context, p string) (backend.FileInfo, error) {
	c, err := f.begin(ctx, "fs.stat", p)
	if err != nil {
		return backend.FileInfo{}, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookup("fs.stat", c)
	if err != nil {
		return backend.FileInfo{}, err
	}
	return n.info(c), nil
}

// List returns a directory's entries sorted by name.
func (f *FS) List(ctx context.Context, p string) (backend.ListResult, error) {
	const op = "fs.list"
	c, err := f.begin(ctx, op, p)
	if err != nil {
		return backend.ListResult{}, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookup(op, c)
	if err != nil {
		return backend.ListResult{}, err
	}
	if !n.dir {
		return backend.ListResult{}, backend.Errorf(backend.ErrInvalid, op, c, "not a directory; use read for files")
	}
	names := slices.Sorted(maps.Keys(n.children))
	var res backend.ListResult
	if limit := f.ws.limits().MaxResults; len(names) > limit {
		names, res.Truncated = names[:limit], true
	}
	for _, name := range names {
		res.Entries = append(res.Entries, n.children[name].info(join(c, name)))
	}
	return res, nil
}

func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// splitLines splits text into lines without their endings ("\n" or
// "\r\n"); a final line ending does not start another line.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(data), "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.ToValidUTF8(strings.TrimSuffix(l, "\r"), "\uFFFD")
	}
	return lines
}

// Read returns lines of a text file.
func (f *FS) Read(ctx context.Context, req backend.ReadRequest) (backend.ReadResult, error) {
	const op = "fs.read"
	c, err := f.begin(ctx, op, req.Path)
	if err != nil {
		return backend.ReadResult{}, err
	}
	l := f.ws.limits()
	limit, err := l.ReadLimit(req)
	if err != nil {
		return backend.ReadResult{}, err
	}
	f.mu.RLock()
	n, err := f.lookup(op, c)
	var data []byte
	if err == nil {
		data = n.data
		if n.dir {
			err = backend.Errorf(backend.ErrInvalid, op, c, "is a directory; use list")
		}
	}
	f.mu.RUnlock()
	if err != nil {
		return backend.ReadResult{}, err
	}
	all := splitLines(data)
	res := backend.ReadResult{Path: c, Offset: req.Offset, TotalLines: len(all)}
	budget := l.MaxReadBytes
	for _, line := range all[min(req.Offset, len(all)):min(req.Offset+limit, len(all))] {
		if len(line) > budget {
			res.Lines = append(res.Lines, cutUTF8(line, budget))
			res.Truncated = true
			break
		}
		budget -= len(line)
		res.Lines = append(res.Lines, line)
	}
	return res, nil
}

// cutUTF8 cuts s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Write creates, replaces or appends to a file, creating its parents.
func (f *FS) Write(ctx context.Context, req backend.WriteRequest) (backend.WriteResult, error) {
	const op = "fs.write"
	c, err := f.beginMutation(ctx, op, req.Path, req.Resolved)
	if err != nil {
		return backend.WriteResult{}, err
	}
	mode := req.Mode
	switch mode {
	case "":
		mode = backend.WriteCreate
	case backend.WriteCreate, backend.WriteOverwrite, backend.WriteAppend:
	default:
		return backend.WriteResult{}, backend.Errorf(backend.ErrInvalid, op, c, "unknown write mode %q: use %q, %q or %q",
			mode, backend.WriteCreate, backend.WriteOverwrite, backend.WriteAppend)
	}
	if err := f.ws.limits().CheckWrite(op, c, req.Content); err != nil {
		return backend.WriteResult{}, err
	}
	if c == "." {
		return backend.WriteResult{}, backend.Errorf(backend.ErrInvalid, op, c, "the workspace root is a directory; name a file")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	segs := segments(c)
	parent, err := f.mkdirs(op, segs[:len(segs)-1])
	if err != nil {
		return backend.WriteResult{}, err
	}
	name := segs[len(segs)-1]
	n, exists := parent.children[name]
	switch {
	case exists && n.dir:
		return backend.WriteResult{}, backend.Errorf(backend.ErrInvalid, op, c, "is a directory; name a file")
	case exists && mode == backend.WriteCreate:
		return backend.WriteResult{}, backend.Errorf(backend.ErrExist, op, c, "file exists; use overwrite or append mode, or edit it")
	case !exists:
		n = &node{}
		parent.children[name] = n
	}
	if mode == backend.WriteAppend {
		n.data = append(n.data, req.Content...)
	} else {
		n.data = []byte(req.Content)
	}
	n.mod = time.Now()
	return backend.WriteResult{Path: c, Bytes: len(req.Content), Created: !exists}, nil
}

// mkdirs walks segs from the root, creating missing directories; the
// caller holds the write lock.
func (f *FS) mkdirs(op string, segs []string) (*node, error) {
	n := f.root
	for i, s := range segs {
		c, ok := n.children[s]
		if !ok {
			c = newDir()
			n.children[s] = c
		}
		if !c.dir {
			return nil, backend.Errorf(backend.ErrInvalid, op, strings.Join(segs[:i+1], "/"), "is a file, not a directory")
		}
		n = c
	}
	return n, nil
}

// Edit replaces an exact string in a file.
func (f *FS) Edit(ctx context.Context, req backend.EditRequest) (backend.EditResult, error) {
	const op = "fs.edit"
	c, err := f.beginMutation(ctx, op, req.Path, req.Resolved)
	if err != nil {
		return backend.EditResult{}, err
	}
	if req.Old == "" {
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, op, c, "the string to replace is empty")
	}
	if err := f.ws.limits().CheckWrite(op, c, req.New); err != nil {
		return backend.EditResult{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup(op, c)
	if err != nil {
		return backend.EditResult{}, err
	}
	if n.dir {
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, op, c, "is a directory; name a file")
	}
	text := string(n.data)
	count := strings.Count(text, req.Old)
	switch {
	case count == 0:
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, op, c, "the string to replace was not found; read the file and copy the text exactly")
	case count > 1 && !req.ReplaceAll:
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, op, c,
			"the string to replace occurs %d times; include more context to make it unique, or set replace_all", count)
	}
	if !req.ReplaceAll {
		count = 1
	}
	n.data = []byte(strings.Replace(text, req.Old, req.New, count))
	n.mod = time.Now()
	return backend.EditResult{Path: c, Replacements: count}, nil
}

// Remove removes a file or a directory (recursive when not empty), never
// the root.
func (f *FS) Remove(ctx context.Context, req backend.RemoveRequest) (backend.RemoveResult, error) {
	const op = "fs.remove"
	c, err := f.beginMutation(ctx, op, req.Path, req.Resolved)
	if err != nil {
		return backend.RemoveResult{}, err
	}
	if c == "." {
		return backend.RemoveResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path, "the workspace root is never removed; remove its entries instead")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup(op, c)
	if err != nil {
		return backend.RemoveResult{}, err
	}
	if n.dir && len(n.children) > 0 && !req.Recursive {
		return backend.RemoveResult{}, backend.Errorf(backend.ErrInvalid, op, c, "directory is not empty; set recursive to remove it with its contents")
	}
	parent, _ := f.lookup(op, path.Dir(c))
	delete(parent.children, path.Base(c))
	return backend.RemoveResult{Removed: count(n)}, nil
}

func count(n *node) int {
	total := 1
	for _, c := range n.children {
		total += count(c)
	}
	return total
}

// Interface guards
var (
	_ backend.Filesystem   = (*FS)(nil)
	_ backend.PathResolver = (*FS)(nil)
)
