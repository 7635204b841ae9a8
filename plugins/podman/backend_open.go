//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Open returns the workspace of spec.Session: its directory is created (and
// filled from host_mounts when new and empty) at once, its container on first
// use. Opening a session that is open already returns the same workspace;
// one a previous process kept is reattached (directory and container).
func (b *Backend) Open(ctx context.Context, spec backend.WorkspaceSpec) (backend.Workspace, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return nil, backend.Errorf(backend.ErrUnavailable, "open", "", "the podman backend is closed")
		}
		key := openKey(spec.User, spec.Session)
		if w, ok := b.open[key]; ok {
			w.refs++
			w.keepFlag = w.keepFlag || spec.Keep
			b.mu.Unlock()
			return w, nil
		}
		if ch, ok := b.opening[key]; ok {
			// Another caller is opening the same session: wait for it
			// rather than hydrate the directory twice.
			b.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("open: %w", ctx.Err())
			}
		}
		ch := make(chan struct{})
		b.opening[key] = ch
		b.mu.Unlock()
		w, err := b.openWorkspace(ctx, spec)
		b.mu.Lock()
		delete(b.opening, key)
		closed := b.closed
		if err == nil && !closed {
			b.open[key] = w
		}
		close(ch)
		b.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if closed { // Close ran meanwhile and did not see this one
			_ = w.Close(context.WithoutCancel(ctx))
			return nil, backend.Errorf(backend.ErrUnavailable, "open", "", "the podman backend is closed")
		}
		return w, nil
	}
}

func (b *Backend) openWorkspace(ctx context.Context, spec backend.WorkspaceSpec) (*Workspace, error) {
	paths, err := b.cfg.pathsFor(spec)
	if err != nil {
		return nil, err
	}
	w := &Workspace{
		b: b, session: spec.Session, user: spec.User, name: paths.name,
		dir: paths.dir, statePath: paths.state, imagePath: paths.image, volume: paths.volume,
		closing: make(chan struct{}), refs: 1, keepFlag: spec.Keep,
	}
	w.shell = &Shell{w: w}
	if err := os.MkdirAll(filepath.Dir(w.dir), 0o711); err != nil {
		return nil, backend.Errorf(backend.ErrUnavailable, "open", filepath.Dir(w.dir), "cannot create the workspace directory: %v", err)
	}
	// The state file comes first: from then on wai gc sees a live owner,
	// never a bare directory it would take for a crash's leftover.
	prev, _, prevErr := readState(w.statePath)
	state := sessionState{Session: spec.Session, User: spec.User, Container: w.name, Workspace: w.ref(), Keep: spec.Keep,
		Created: time.Now().UTC(), Owner: backend.CurrentHolder(), IdleTimeout: &b.cfg.IdleTimeout}
	if prevErr == nil && !prev.Created.IsZero() {
		state.Created = prev.Created
	}
	if err := writeState(w.statePath, state); err != nil {
		return nil, backend.Errorf(backend.ErrUnavailable, "open", w.statePath, "cannot write the session's state file: %v", err)
	}
	if w.volume != "" {
		return b.openVolume(ctx, w, spec)
	}
	return b.openDir(ctx, w, spec)
}

// openDir finishes opening a directory workspace (the state file is
// written), as openVolume does a volume one: the directory is made or
// adopted, given to the container user and served by a confined
// Filesystem, and a new, empty one gets host_mounts.
func (b *Backend) openDir(ctx context.Context, w *Workspace, spec backend.WorkspaceSpec) (*Workspace, error) {
	fresh, err := b.makeDir(ctx, w)
	if err != nil {
		os.Remove(w.statePath)
		return nil, err
	}
	if fresh && spec.Keep {
		// wai gc removed this kept session's workspace: say so on its
		// first call rather than hand out an empty one unannounced.
		w.noticeRemoved()
	} else {
		_ = os.Remove(tombstonePath(w.statePath))
	}
	undo := func() {
		if fresh {
			if detachVolume(w.dir, w.imagePath) == nil {
				os.RemoveAll(w.dir)
			}
		}
		os.Remove(w.statePath)
	}
	if err := b.prepareDir(w.dir); err != nil {
		undo()
		return nil, err
	}
	if err := w.openFS(); err != nil {
		undo()
		return nil, err
	}
	if len(b.cfg.HostMounts) > 0 {
		if empty, _ := isEmptyDir(w.dir); empty {
			t0 := time.Now()
			files, n, err := newHydrator(b.cfg.AllowedHostRoots).run(ctx, w.fs, b.cfg.HostMounts)
			if err != nil {
				w.fs.Close()
				undo()
				return nil, err
			}
			b.event(ctx, "runtime.podman.hydrated", w, "files", files, "bytes", n, "duration", time.Since(t0))
		}
	}
	w.lastUsed.Store(time.Now().UnixNano())
	return w, nil
}

// prepareDir makes the workspace directory usable by the container user.
func (b *Backend) prepareDir(dir string) error {
	if b.owner != nil {
		if err := os.Lchown(dir, b.owner.uid, b.owner.gid); err != nil {
			return backend.Errorf(backend.ErrUnavailable, "open", dir, "cannot give the workspace to the container user: %v", err)
		}
		return nil
	}
	return os.Chmod(dir, 0o777)
}

// openKey names an open session: two users' sessions of one name are two
// sessions. "/" occurs in neither name.
func openKey(user, session string) string { return user + "/" + session }

// release drops one hold on w and reports whether it was the last.
func (b *Backend) release(w *Workspace) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.refs <= 0 {
		return false
	}
	w.refs--
	if w.refs > 0 {
		return false
	}
	if key := openKey(w.user, w.session); b.open[key] == w {
		delete(b.open, key)
	}
	return true
}
