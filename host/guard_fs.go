package host

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// guardedFS is a session's Filesystem: limits, then (for mutations)
// policies and read-before-write, then the workspace.
type guardedFS struct{ s *Session }

func checkPath(op, p string) error {
	if strings.IndexByte(p, 0) >= 0 {
		return backend.Errorf(backend.ErrInvalid, op, "", "path contains a NUL byte")
	}
	if len(p) > 4096 {
		return backend.Errorf(backend.ErrInvalid, op, "", "path is %d bytes, over the limit of 4096", len(p))
	}
	return nil
}

// enter runs the common prologue of a read and returns the workspace's
// filesystem.
func (g *guardedFS) enter(ctx context.Context, op, path string) (backend.Filesystem, func(), error) {
	s := g.s
	done, err := s.begin()
	if err != nil {
		return nil, nil, err
	}
	if err := checkPath(op, path); err != nil {
		done()
		return nil, nil, err
	}
	ws, _, err := s.workspace(ctx)
	if err != nil {
		done()
		return nil, nil, err
	}
	return ws.FS(), done, nil
}

// enterMutation runs the prologue of a write, edit or remove: the
// workspace, then checkMutation. It returns the resolved path for the
// mutation to act on (backend.WriteRequest.Resolved and its siblings):
// walked there without following a symlink, the change lands on the entry
// the policies judged or fails, however the sandbox rearranges symlinks
// between the check and the change.
func (g *guardedFS) enterMutation(ctx context.Context, op, action, path string, followLast bool) (backend.Filesystem, string, func(), error) {
	fs, done, err := g.enter(ctx, op, path)
	if err != nil {
		return nil, "", nil, err
	}
	resolved, err := g.s.checkMutation(ctx, fs, op, action, path, followLast)
	if err != nil {
		done()
		return nil, "", nil, err
	}
	return fs, resolved, done, nil
}

// checkMutation resolves path in the workspace filesystem fs and puts the
// mutation to the policies, which judge the requested path and the
// resolved one; it returns the resolved path. Every write into the
// workspace a policy should see comes here: the file functions' and
// copy_out's (containers_copy.go), so they cannot be judged apart.
func (s *Session) checkMutation(ctx context.Context, fs backend.Filesystem, op, action, path string, followLast bool) (string, error) {
	resolved := ""
	if r, ok := fs.(backend.PathResolver); ok {
		var err error
		if resolved, err = r.ResolvePath(ctx, path, followLast); err != nil {
			return "", err
		}
	} else if s.k.chain.judges(action) {
		// Without the resolved path a policy about "protected/" passes a
		// write through "p -> protected": refuse rather than guess.
		return "", backend.Errorf(backend.ErrUnavailable, op, path,
			"the backend's filesystem cannot resolve paths (backend.PathResolver), which the policies judging %s need: use a backend that does (host, podman, mock)", action)
	}
	return resolved, s.check(ctx, CheckRequest{Action: action, Path: path, ResolvedPath: resolved})
}

func (g *guardedFS) Stat(ctx context.Context, path string) (backend.FileInfo, error) {
	fs, done, err := g.enter(ctx, "fs.stat", path)
	if err != nil {
		return backend.FileInfo{}, err
	}
	defer done()
	return fs.Stat(ctx, path)
}

func (g *guardedFS) List(ctx context.Context, path string) (backend.ListResult, error) {
	fs, done, err := g.enter(ctx, "fs.list", path)
	if err != nil {
		return backend.ListResult{}, err
	}
	defer done()
	return fs.List(ctx, path)
}

func (g *guardedFS) Read(ctx context.Context, req backend.ReadRequest) (backend.ReadResult, error) {
	if _, err := g.s.k.cfg.Limits.ReadLimit(req); err != nil {
		return backend.ReadResult{}, err
	}
	fs, done, err := g.enter(ctx, "fs.read", req.Path)
	if err != nil {
		return backend.ReadResult{}, err
	}
	defer done()
	// Stat before reading: if the file changes in between, the session
	// remembers the older version and must read again before a write,
	// never the other way round.
	fi, statErr := fs.Stat(ctx, req.Path)
	res, err := fs.Read(ctx, req)
	if err == nil && statErr == nil {
		g.s.markKnown(fi)
	}
	return res, err
}

func (g *guardedFS) Write(ctx context.Context, req backend.WriteRequest) (backend.WriteResult, error) {
	const op = "fs.write"
	switch req.Mode {
	case "", backend.WriteCreate, backend.WriteOverwrite, backend.WriteAppend:
	default:
		return backend.WriteResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path, "write mode %q is not create, overwrite or append", req.Mode)
	}
	if err := g.s.k.cfg.Limits.CheckWrite(op, req.Path, req.Content); err != nil {
		return backend.WriteResult{}, err
	}
	fs, resolved, done, err := g.enterMutation(ctx, op, ActionFSWrite, req.Path, true)
	if err != nil {
		return backend.WriteResult{}, err
	}
	defer done()
	req.Resolved = resolved
	if req.Mode == backend.WriteOverwrite || req.Mode == backend.WriteAppend {
		if err := g.readBeforeWrite(ctx, fs, op, req.Path); err != nil {
			return backend.WriteResult{}, err
		}
	}
	start := time.Now()
	res, err := fs.Write(ctx, req)
	if err == nil {
		// The session wrote it, so it knows what is there.
		g.s.markKnownPath(ctx, fs, res.Path)
	}
	g.event(ctx, op, req.Path, err, time.Since(start))
	return res, err
}

func (g *guardedFS) Edit(ctx context.Context, req backend.EditRequest) (backend.EditResult, error) {
	const op = "fs.edit"
	if req.Old == "" {
		return backend.EditResult{}, backend.Errorf(backend.ErrInvalid, op, req.Path, "old string is empty: give the exact text to replace")
	}
	if err := g.s.k.cfg.Limits.CheckWrite(op, req.Path, req.New); err != nil {
		return backend.EditResult{}, err
	}
	fs, resolved, done, err := g.enterMutation(ctx, op, ActionFSEdit, req.Path, true)
	if err != nil {
		return backend.EditResult{}, err
	}
	defer done()
	req.Resolved = resolved
	if err := g.readBeforeWrite(ctx, fs, op, req.Path); err != nil {
		return backend.EditResult{}, err
	}
	start := time.Now()
	res, err := fs.Edit(ctx, req)
	if err == nil {
		g.s.markKnownPath(ctx, fs, res.Path)
	}
	g.event(ctx, op, req.Path, err, time.Since(start))
	return res, err
}

func (g *guardedFS) Glob(ctx context.Context, req backend.GlobRequest) (backend.GlobResult, error) {
	if err := checkPath("fs.glob", req.Pattern); err != nil {
		return backend.GlobResult{}, err
	}
	fs, done, err := g.enter(ctx, "fs.glob", req.Path)
	if err != nil {
		return backend.GlobResult{}, err
	}
	defer done()
	return fs.Glob(ctx, req)
}

func (g *guardedFS) Grep(ctx context.Context, req backend.GrepRequest) (backend.GrepResult, error) {
	if err := checkPath("fs.grep", req.Glob); err != nil {
		return backend.GrepResult{}, err
	}
	fs, done, err := g.enter(ctx, "fs.grep", req.Path)
	if err != nil {
		return backend.GrepResult{}, err
	}
	defer done()
	return fs.Grep(ctx, req)
}

func (g *guardedFS) Remove(ctx context.Context, req backend.RemoveRequest) (backend.RemoveResult, error) {
	const op = "fs.remove"
	fs, resolved, done, err := g.enterMutation(ctx, op, ActionFSRemove, req.Path, false)
	if err != nil {
		return backend.RemoveResult{}, err
	}
	defer done()
	req.Resolved = resolved
	var known string
	if fi, err := fs.Stat(ctx, req.Path); err == nil {
		known = fi.Path
	}
	start := time.Now()
	res, err := fs.Remove(ctx, req)
	if err == nil && known != "" {
		g.s.forgetUnder(known)
	}
	g.event(ctx, op, req.Path, err, time.Since(start))
	return res, err
}

// readBeforeWrite refuses to change an existing file the session has not
// read, or that changed since it last read or wrote it: a model that edits
// blind overwrites what it never saw.
func (g *guardedFS) readBeforeWrite(ctx context.Context, fs backend.Filesystem, op, path string) error {
	if !g.s.k.cfg.ReadBeforeWrite {
		return nil
	}
	fi, err := fs.Stat(ctx, path)
	switch {
	case errors.Is(err, backend.ErrNotFound):
		return nil // nothing to lose
	case err != nil:
		return err
	case fi.Kind != backend.KindFile:
		return nil // the backend refuses non-files with its own message
	}
	switch g.s.knowledgeOf(fi) {
	case knownAsIs:
		return nil
	case knownChanged:
		return backend.Errorf(backend.ErrInvalid, op, path, "the file changed since this session last read or wrote it: read it again first (read_before_write)")
	}
	return backend.Errorf(backend.ErrInvalid, op, path, "the file exists and has not been read in this session: read it first (read_before_write)")
}

func (g *guardedFS) event(ctx context.Context, op, path string, err error, dur time.Duration) {
	g.s.useEvent(ctx, op, err, func() []slog.Attr {
		return []slog.Attr{slog.String("path", path), slog.Duration("duration", dur)}
	})
}

// Interface guards
var _ backend.Filesystem = (*guardedFS)(nil)
