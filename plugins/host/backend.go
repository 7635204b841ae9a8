//go:build linux && (amd64 || arm64)

package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/rootfs"
)

func init() {
	backend.Register("host", func(_ context.Context, opts backend.Options) (backend.Backend, error) {
		return New(opts)
	})
}

// Backend opens host workspaces. It is safe for concurrent use.
type Backend struct {
	cfg     Config
	limits  backend.Limits
	log     *slog.Logger
	records records // what other processes see of this backend's sessions

	mu     sync.Mutex
	open   map[string]*Workspace // by session
	closed bool
}

// Interface guards
var (
	_ backend.SessionLister    = (*Backend)(nil)
	_ backend.SessionRemover   = (*Backend)(nil)
	_ backend.GarbageCollector = (*Backend)(nil)
	_ backend.Backend          = (*Backend)(nil)
)

// New creates a host backend; backend.Open("host", …) calls it. Options
// left zero get the same defaults backend.Open gives them.
func New(opts backend.Options) (*Backend, error) {
	opts, err := opts.WithDefaults()
	if err != nil {
		return nil, err
	}
	cfg, err := parseConfig(opts)
	if err != nil {
		return nil, err
	}
	state, err := stateDir(opts)
	if err != nil {
		return nil, err
	}
	return &Backend{cfg: cfg, limits: opts.Limits, log: opts.Logger, open: map[string]*Workspace{},
		records: records{dir: filepath.Join(state, "host", "@state")}}, nil
}

// Config returns the effective configuration, defaults filled in.
func (b *Backend) Config() Config { return b.cfg }

// Open returns the workspace of spec.Session, creating its root directory
// (mode 0700) if needed. Opening a session that is already open returns the
// same workspace, which then needs one more Close.
func (b *Backend) Open(ctx context.Context, spec backend.WorkspaceSpec) (backend.Workspace, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	root, err := b.cfg.rootFor(spec)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, backend.Errorf(backend.ErrUnavailable, "open", spec.Session, "the host backend is closed")
	}
	if w := b.open[spec.Session]; w != nil {
		if w.dir != root {
			return nil, backend.Errorf(backend.ErrInvalid, "open", spec.Session,
				"the session is already open in %s, not %s: close it first, or use another session name", w.dir, root)
		}
		w.refs++
		if spec.Keep && !w.keep {
			w.keep = true
			_, _ = b.hold(spec, w.dir, w.remove) // records the keep; the session stays usable either way
		}
		return w, nil
	}
	// The record comes first: from then on no other process removes the
	// root (wai rm, wai gc see a live holder), and none takes the session
	// for a crash's leftover.
	own := b.cfg.perSession()
	existed, err := b.hold(spec, root, own)
	if err != nil {
		return nil, backend.Errorf(backend.ErrUnavailable, "open", spec.Session, "cannot record the session under %s: %v", b.records.dir, err)
	}
	// A failed open leaves a kept session's record as it was, and no
	// record of a session that never opened.
	undo := func() { _ = b.letGo(spec.Session, root, own, spec.Keep, !existed) }
	if err := os.MkdirAll(root, 0o700); err != nil {
		undo()
		return nil, backend.Errorf(backend.ErrUnavailable, "open", spec.Session, "cannot create the workspace root %s: %v", root, err)
	}
	fsys, err := rootfs.New(root, rootfs.Options{Limits: b.limits})
	if err != nil {
		undo()
		return nil, err
	}
	rootInfo, err := os.Stat(fsys.Root())
	if err != nil {
		fsys.Close()
		undo()
		return nil, backend.Errorf(backend.ErrUnavailable, "open", spec.Session, "the workspace root %s: %v", root, err)
	}
	wctx, cancel := context.WithCancel(context.Background())
	w := &Workspace{
		b: b, session: spec.Session, dir: root, root: fsys.Root(), fs: fsys, refs: 1,
		keep: spec.Keep, remove: own, ctx: wctx, cancel: cancel, rootInfo: rootInfo,
	}
	w.guarded = &liveFS{FS: fsys, w: w}
	w.env = b.baseEnv(w.root)
	w.shell = &Shell{w: w}
	b.open[spec.Session] = w
	return w, nil
}

// baseEnv is the environment every command of a workspace starts from.
func (b *Backend) baseEnv(root string) map[string]string {
	env := map[string]string{}
	if b.cfg.InheritEnv {
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				env[k] = v
			}
		}
	} else {
		env["PATH"] = defaultPath
		env["HOME"] = root
		env["LANG"] = "C.UTF-8"
		env["TMPDIR"] = os.TempDir()
	}
	for k, v := range b.cfg.Env {
		env[k] = v
	}
	return env
}

// Close closes every workspace still open, as Workspace.Close would, and
// refuses later Opens.
func (b *Backend) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	open := make([]*Workspace, 0, len(b.open))
	for _, w := range b.open {
		open = append(open, w)
	}
	b.open = map[string]*Workspace{}
	b.mu.Unlock()
	var errs []error
	for _, w := range open {
		errs = append(errs, w.shutdown(ctx))
	}
	return errors.Join(errs...)
}

// Workspace is one session's root directory with its shell and filesystem.
type Workspace struct {
	b       *Backend
	session string
	dir     string // the root as configured, placeholders expanded
	root    string // its real host path
	fs      *rootfs.FS
	guarded *liveFS // fs, checking first that the root is still there
	shell   *Shell
	// rootInfo identifies the root directory as opened: a root removed
	// (or replaced) behind wai's back is noticed, not served as empty.
	rootInfo os.FileInfo
	env      map[string]string // base environment; never modified after Open
	remove   bool              // the root is the session's own
	ctx      context.Context   // cancelled when the workspace closes
	cancel   context.CancelFunc

	// refs and keep are guarded by b.mu.
	refs int
	keep bool

	mu      sync.Mutex // guards closed and running's Add against shutdown
	closed  bool
	running sync.WaitGroup
}

// Shell returns the workspace's shell.
func (w *Workspace) Shell() backend.Shell { return w.shell }

// FS returns the workspace's filesystem, confined to the same root.
func (w *Workspace) FS() backend.Filesystem { return w.guarded }

// Root returns the real host path of the workspace root.
func (w *Workspace) Root() string { return w.root }

// Close releases one Open of the session. The last one stops commands
// still running, and removes a per-session root unless the session was
// opened with Keep.
func (w *Workspace) Close(ctx context.Context) error {
	b := w.b
	b.mu.Lock()
	if b.open[w.session] != w { // already closed (or closed with the backend)
		b.mu.Unlock()
		return nil
	}
	w.refs--
	if w.refs > 0 {
		b.mu.Unlock()
		return nil
	}
	delete(b.open, w.session)
	b.mu.Unlock()
	return w.shutdown(ctx)
}

// begin registers a command about to run; the returned function ends it.
func (w *Workspace) begin(op string) (func(), error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, backend.Errorf(backend.ErrUnavailable, op, "", "the workspace is closed: open the session again")
	}
	if err := w.rootGone(op); err != nil {
		return nil, err
	}
	w.running.Add(1)
	w.b.records.touch(w.session)
	return w.running.Done, nil
}

func (w *Workspace) shutdown(ctx context.Context) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	w.cancel() // kills what still runs, like a timeout
	done := make(chan struct{})
	go func() { w.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("close workspace %s: commands still stopping: %w", w.session, ctx.Err())
	}
	err := w.fs.Close()
	b := w.b
	b.mu.Lock()
	keep := w.keep
	b.mu.Unlock()
	if !keep {
		// A session that ends takes its background jobs with it; a kept
		// one keeps them for the next process that opens it.
		err = errors.Join(err, b.endJobs(w.session))
	}
	removed := false
	if w.remove && !keep {
		if rerr := removeRoot(w.root); rerr != nil {
			err = errors.Join(err, backend.Errorf(backend.ErrUnavailable, "close", w.session, "cannot remove the workspace root %s: %v", w.root, rerr))
		} else {
			removed = true
		}
	}
	if rerr := b.letGo(w.session, w.dir, w.remove, keep, removed || !w.remove && !keep); rerr != nil {
		err = errors.Join(err, backend.Errorf(backend.ErrUnavailable, "close", w.session, "cannot update the session's record under %s: %v", b.records.dir, rerr))
	}
	return err
}

// removeRoot deletes a workspace root, first making writable any
// directory a command made read-only, which would stop os.RemoveAll for
// anyone but root.
func removeRoot(root string) error {
	if err := os.RemoveAll(root); err == nil {
		return nil
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(root)
}

// rootGone reports a root that is no longer the directory the session
// opened: removed by hand or by another program (wai rm and wai gc never
// remove a held session). Its files are gone; serving the session on
// would present an empty workspace as if nothing happened.
func (w *Workspace) rootGone(op string) error {
	fi, err := os.Stat(w.root)
	if err == nil && os.SameFile(fi, w.rootInfo) {
		return nil
	}
	return backend.Errorf(backend.ErrUnavailable, op, "",
		"this session's workspace %s is gone: something removed it while the session was open (a command of the session, or a program outside wai; wai rm and wai gc leave a session in use alone), and its files with it: start a new session", w.root)
}

// liveFS is the workspace's rootfs.FS, every Filesystem call first
// checking that the root is still the one the session opened. The other
// methods of *rootfs.FS pass through.
type liveFS struct {
	*rootfs.FS
	w *Workspace
}

// rootGone is Workspace.rootGone for an open workspace; a closed one
// leaves the answer to rootfs, which says it is closed.
func (f *liveFS) rootGone(op string) error {
	f.w.mu.Lock()
	closed := f.w.closed
	f.w.mu.Unlock()
	if closed {
		return nil
	}
	return f.w.rootGone(op)
}

func (f *liveFS) Stat(ctx context.Context, p string) (backend.FileInfo, error) {
	if err := f.rootGone("fs.stat"); err != nil {
		return backend.FileInfo{}, err
	}
	return f.FS.Stat(ctx, p)
}

func (f *liveFS) List(ctx context.Context, p string) (backend.ListResult, error) {
	if err := f.rootGone("fs.list"); err != nil {
		return backend.ListResult{}, err
	}
	return f.FS.List(ctx, p)
}

func (f *liveFS) Read(ctx context.Context, req backend.ReadRequest) (backend.ReadResult, error) {
	if err := f.rootGone("fs.read"); err != nil {
		return backend.ReadResult{}, err
	}
	return f.FS.Read(ctx, req)
}

func (f *liveFS) Write(ctx context.Context, req backend.WriteRequest) (backend.WriteResult, error) {
	if err := f.rootGone("fs.write"); err != nil {
		return backend.WriteResult{}, err
	}
	return f.FS.Write(ctx, req)
}

func (f *liveFS) Edit(ctx context.Context, req backend.EditRequest) (backend.EditResult, error) {
	if err := f.rootGone("fs.edit"); err != nil {
		return backend.EditResult{}, err
	}
	return f.FS.Edit(ctx, req)
}

func (f *liveFS) Glob(ctx context.Context, req backend.GlobRequest) (backend.GlobResult, error) {
	if err := f.rootGone("fs.glob"); err != nil {
		return backend.GlobResult{}, err
	}
	return f.FS.Glob(ctx, req)
}

func (f *liveFS) Grep(ctx context.Context, req backend.GrepRequest) (backend.GrepResult, error) {
	if err := f.rootGone("fs.grep"); err != nil {
		return backend.GrepResult{}, err
	}
	return f.FS.Grep(ctx, req)
}

func (f *liveFS) Remove(ctx context.Context, req backend.RemoveRequest) (backend.RemoveResult, error) {
	if err := f.rootGone("fs.remove"); err != nil {
		return backend.RemoveResult{}, err
	}
	return f.FS.Remove(ctx, req)
}

// Interface guards
var (
	_ backend.Workspace  = (*Workspace)(nil)
	_ backend.Filesystem = (*liveFS)(nil)
)
