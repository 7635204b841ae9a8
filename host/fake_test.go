package host

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// fakeBackend is an in-memory backend that records what reaches it, so
// tests can prove what the kernel let through and what it stopped.
type fakeBackend struct {
	name      string
	sandboxed bool
	openErr   error
	// noResolver hides fakeFS.ResolvePath: a filesystem that cannot say
	// which entry a mutation changes.
	noResolver bool

	opens  atomic.Int64
	closes atomic.Int64

	mu     sync.Mutex
	execs  []backend.ExecRequest
	writes []string
	files  map[string]map[string]string // session → path → content
	spaces map[string]*fakeWorkspace
}

func newFake(name string, sandboxed bool) *fakeBackend {
	return &fakeBackend{name: name, sandboxed: sandboxed, files: map[string]map[string]string{}, spaces: map[string]*fakeWorkspace{}}
}

func (b *fakeBackend) Open(ctx context.Context, spec backend.WorkspaceSpec) (backend.Workspace, error) {
	if b.openErr != nil {
		return nil, b.openErr
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	b.opens.Add(1)
	time.Sleep(time.Millisecond) // widen the window concurrent first uses race in
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.files[spec.Session] == nil {
		b.files[spec.Session] = map[string]string{}
	}
	ws := &fakeWorkspace{b: b, session: spec.Session}
	b.spaces[spec.Session] = ws
	return ws, nil
}

func (b *fakeBackend) Close(context.Context) error { return nil }

// Info describes the fake to the kernel (Kernel.Info), as a backend handed
// in with WithBackend may.
func (b *fakeBackend) Info() backend.Info {
	return backend.Info{Backend: b.name, Sandboxed: b.sandboxed}
}

func (b *fakeBackend) execCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.execs)
}

func (b *fakeBackend) writeCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.writes)
}

type fakeWorkspace struct {
	b       *fakeBackend
	session string
	closed  atomic.Bool
}

func (w *fakeWorkspace) Shell() backend.Shell { return fakeShell{w} }
func (w *fakeWorkspace) FS() backend.Filesystem {
	if w.b.noResolver {
		return struct{ backend.Filesystem }{fakeFS{w}}
	}
	return fakeFS{w}
}
func (w *fakeWorkspace) Close(context.Context) error {
	if w.closed.Swap(true) {
		return errors.New("workspace closed twice")
	}
	w.b.closes.Add(1)
	return nil
}

type fakeShell struct{ w *fakeWorkspace }

func (s fakeShell) Execute(ctx context.Context, req backend.ExecRequest) (backend.ExecResult, error) {
	s.w.b.mu.Lock()
	s.w.b.execs = append(s.w.b.execs, req)
	s.w.b.mu.Unlock()
	out := ""
	if len(req.Argv) > 1 && req.Argv[0] == "echo" {
		out = strings.Join(req.Argv[1:], " ") + "\n"
	}
	return backend.ExecResult{Stdout: out, Command: req.Command(), Backend: s.w.b.name, Sandboxed: s.w.b.sandboxed}, nil
}

func (s fakeShell) ExecuteScript(ctx context.Context, req backend.ScriptRequest) (backend.ExecResult, error) {
	return s.Execute(ctx, backend.ExecRequest{Shell: req.Script})
}

func (s fakeShell) Which(ctx context.Context, c string) (backend.WhichResult, error) {
	return backend.WhichResult{Command: c, Path: "/usr/bin/" + c}, nil
}

func (s fakeShell) Env(ctx context.Context) (backend.EnvSnapshot, error) {
	return backend.NewEnvSnapshot(map[string]string{"PATH": "/usr/bin"}, "/", "/bin/sh"), nil
}

func (s fakeShell) Info(context.Context) (backend.Info, error) {
	return backend.Info{Backend: s.w.b.name, Sandboxed: s.w.b.sandboxed, DefaultTimeout: 30 * time.Second}, nil
}

type fakeFS struct{ w *fakeWorkspace }

func clean(p string) string {
	p = path.Clean("/" + p)
	if p == "/" {
		return "."
	}
	return p[1:]
}

func (f fakeFS) files() map[string]string { return f.w.b.files[f.w.session] }

// ResolvePath: the fake has no symlinks, so the entry is the clean path.
func (f fakeFS) ResolvePath(ctx context.Context, p string, followLast bool) (string, error) {
	return clean(p), nil
}

func (f fakeFS) Stat(ctx context.Context, p string) (backend.FileInfo, error) {
	f.w.b.mu.Lock()
	defer f.w.b.mu.Unlock()
	c, ok := f.files()[clean(p)]
	if !ok {
		return backend.FileInfo{}, &backend.Error{Kind: backend.ErrNotFound, Op: "fs.stat", Path: p, Msg: "no such file"}
	}
	return backend.FileInfo{Path: clean(p), Name: path.Base(clean(p)), Kind: backend.KindFile, Size: int64(len(c)), Mode: fs.FileMode(0o644)}, nil
}

func (f fakeFS) List(ctx context.Context, p string) (backend.ListResult, error) {
	f.w.b.mu.Lock()
	defer f.w.b.mu.Unlock()
	var out backend.ListResult
	for name := range f.files() {
		out.Entries = append(out.Entries, backend.FileInfo{Path: name, Name: path.Base(name), Kind: backend.KindFile})
	}
	sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].Path < out.Entries[j].Path })
	return out, nil
}

func (f fakeFS) Read(ctx context.Context, req backend.ReadRequest) (backend.ReadResult, error) {
	f.w.b.mu.Lock()
	defer f.w.b.mu.Unlock()
	c, ok := f.files()[clean(req.Path)]
	if !ok {
		return backend.ReadResult{}, &backend.Error{Kind: backend.ErrNotFound, Op: "fs.read", Path: req.Path, Msg: "no such file"}
	}
	lines := strings.Split(strings.TrimSuffix(c, "\n"), "\n")
	return backend.ReadResult{Path: clean(req.Path), Lines: lines, TotalLines: len(lines)}, nil
}

func (f fakeFS) Write(ctx context.Context, req backend.WriteRequest) (backend.WriteResult, error) {
	f.w.b.mu.Lock()
	defer f.w.b.mu.Unlock()
	p := clean(req.Path)
	_, exists := f.files()[p]
	if exists && (req.Mode == "" || req.Mode == backend.WriteCreate) {
		return backend.WriteResult{}, &backend.Error{Kind: backend.ErrExist, Op: "fs.write", Path: req.Path, Msg: "file exists"}
	}
	f.w.b.writes = append(f.w.b.writes, p)
	if req.Mode == backend.WriteAppend {
		f.files()[p] += req.Content
	} else {
		f.files()[p] = req.Content
	}
	return backend.WriteResult{Path: p, Bytes: len(req.Content), Created: !exists}, nil
}

func (f fakeFS) Edit(ctx context.Context, req backend.EditRequest) (backend.EditResult, error) {
	f.w.b.mu.Lock()
	defer f.w.b.mu.Unlock()
	p := clean(req.Path)
	c, ok := f.files()[p]
	if !ok {
		return backend.EditResult{}, &backend.Error{Kind: backend.ErrNotFound, Op: "fs.edit", Path: req.Path, Msg: "no such file"}
	}
	n := strings.Count(c, req.Old)
	if n == 0 || n > 1 && !req.ReplaceAll {
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, "fs.edit", req.Path, "old string found %d times", n)
	}
	f.w.b.writes = append(f.w.b.writes, p)
	f.files()[p] = strings.ReplaceAll(c, req.Old, req.New)
	return backend.EditResult{Path: p, Replacements: n}, nil
}

func (f fakeFS) Glob(ctx context.Context, req backend.GlobRequest) (backend.GlobResult, error) {
	return backend.GlobResult{}, nil
}

func (f fakeFS) Grep(ctx context.Context, req backend.GrepRequest) (backend.GrepResult, error) {
	return backend.GrepResult{}, nil
}

func (f fakeFS) Remove(ctx context.Context, req backend.RemoveRequest) (backend.RemoveResult, error) {
	f.w.b.mu.Lock()
	defer f.w.b.mu.Unlock()
	p := clean(req.Path)
	if _, ok := f.files()[p]; !ok {
		return backend.RemoveResult{}, &backend.Error{Kind: backend.ErrNotFound, Op: "fs.remove", Path: req.Path, Msg: "no such file"}
	}
	f.w.b.writes = append(f.w.b.writes, p)
	delete(f.files(), p)
	return backend.RemoveResult{Removed: 1}, nil
}

// Interface guards
var (
	_ backend.Backend    = (*fakeBackend)(nil)
	_ backend.Workspace  = (*fakeWorkspace)(nil)
	_ backend.Shell      = fakeShell{}
	_ backend.Filesystem = fakeFS{}
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
