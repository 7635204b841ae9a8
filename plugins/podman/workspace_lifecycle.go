//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
)

// Start starts the session's container unless it runs already.
func (w *Workspace) Start(ctx context.Context) (backend.LifecycleState, error) {
	if _, err := w.ensure(ctx); err != nil {
		return backend.LifecycleState{Name: w.name}, err
	}
	w.touch()
	return w.State(ctx)
}

// Stop removes the session's container; the workspace's files stay and the
// next command starts a fresh container.
func (w *Workspace) Stop(ctx context.Context) (backend.LifecycleState, error) {
	w.mu.Lock()
	st := w.cur.Swap(nil)
	w.deadReason = ""
	err := w.b.remove(ctx, w.name)
	w.mu.Unlock()
	if err != nil {
		return backend.LifecycleState{Name: w.name}, err
	}
	if st != nil {
		w.b.event(ctx, "runtime.podman.removed", w, "container_id", short(st.id), "reason", "stopped")
	}
	return w.State(ctx)
}

// State describes the session's container as the service sees it.
func (w *Workspace) State(ctx context.Context) (backend.LifecycleState, error) {
	s := backend.LifecycleState{Name: w.name}
	if n := w.lastUsed.Load(); n > 0 {
		s.LastUsedAt = time.Unix(0, n)
	}
	cctx, err := w.b.svc.ctx(ctx)
	if err != nil {
		return s, err
	}
	data, err := containers.Inspect(cctx, w.name, nil)
	if notFound(err) {
		return s, nil
	}
	if err != nil {
		return s, w.b.svc.wrap(ctx, "state", w.name, err)
	}
	if data.State != nil {
		s.Running = data.State.Running
		if s.Running {
			s.StartedAt = data.State.StartedAt
		}
	}
	return s, nil
}

// Close ends this hold on the session. The last Close stops what still
// runs, then (unless the session is kept) removes the container, the
// workspace directory and the state file; a kept session leaves all three
// for a later Open of the same session, idle cleanup or wai gc.
func (w *Workspace) Close(ctx context.Context) error {
	if !w.b.release(w) {
		return nil
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	close(w.closing)
	w.mu.Unlock()

	if err := w.waitCommands(ctx); err != nil {
		return err
	}
	keep := w.keep()
	var errs []error
	if w.fs != nil {
		if err := w.fs.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if keep {
		// The container stays; its agent ends with this process's hold.
		if st := w.cur.Load(); st != nil {
			st.closeAgent()
		}
		s, _, err := readState(w.statePath)
		if err == nil {
			s.Owner = nil
			if err := writeState(w.statePath, s); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	st := w.cur.Swap(nil)
	if err := w.b.remove(ctx, w.name); err != nil {
		errs = append(errs, err)
	} else if st != nil {
		w.b.event(ctx, "runtime.podman.removed", w, "container_id", short(st.id), "reason", "session closed")
	}
	if w.volume != "" {
		// The volume goes once its container has.
		if len(errs) == 0 {
			if err := removeVolume(ctx, w.b.svc, w.volume, w.session); err != nil {
				errs = append(errs, err)
			}
		}
	} else if err := detachVolume(w.dir, w.imagePath); err != nil {
		// The session's file system (when it has one) is unmounted first;
		// anything else mounted there is not descended into.
		errs = append(errs, err)
	} else if err := os.RemoveAll(w.dir); err != nil {
		errs = append(errs, fmt.Errorf("removing workspace %s: %w", w.dir, err))
	}
	if err := os.Remove(w.statePath); err != nil && !os.IsNotExist(err) {
		errs = append(errs, err)
	}
	_ = os.Remove(tombstonePath(w.statePath))
	removeJobDeadlines(w.statePath)
	return errors.Join(errs...)
}

// waitCommands waits until the running commands returned: they see
// closing, kill their trees and return.
func (w *Workspace) waitCommands(ctx context.Context) error {
	waited := make(chan struct{})
	go func() { w.inflight.Wait(); close(waited) }()
	select {
	case <-waited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close workspace %s: commands still stopping: %w", w.session, ctx.Err())
	}
}
