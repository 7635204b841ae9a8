//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/rootfs"
)

// Workspace is one session: a host directory served by a confined
// Filesystem, and the container, created on first use, that runs its
// commands with the directory mounted at /workspace. It implements
// backend.Lifecycle.
type Workspace struct {
	b         *Backend
	session   string
	user      string // "" when opened without a user
	name      string // container name
	dir       string // host directory
	statePath string
	imagePath string // the file system image of a size-limited workspace
	// volume is the named volume at /workspace in volume mode, "" in
	// bind mode (then dir, imagePath and fs are unused); files serves
	// its Filesystem from inside the container.
	volume string
	files  backend.Filesystem
	// hydrate: host_mounts still to be copied into a new volume, between
	// creating its first container and starting it (guarded by mu).
	hydrate bool
	shell   *Shell
	// managed: this is an agent-managed container (ExecContainer), not a
	// session's: its container is never created, recreated nor given a
	// directory check, and what a command leaves running stays.
	managed bool
	// workdir: a managed container's working directory, where its jobs
	// run by default (ContainerJobs).
	workdir string

	fs *rootfs.FS

	// dirMu guards dirID, the identity of the workspace directory, and
	// removedNotice; see checkDir. It is taken before mu, never after.
	dirMu         sync.Mutex
	dirID         fileID
	removedNotice string

	cur      atomic.Pointer[ctrState] // the running container, nil until ensured
	lastUsed atomic.Int64             // unix nanoseconds
	busy     atomic.Int32             // commands running
	closing  chan struct{}            // closed when Close begins

	mu         sync.Mutex // lifecycle: creating, adopting, removing the container
	deadReason string     // why cur was dropped; the next ensure recreates
	closed     bool
	refs       int  // Opens not yet Closed (guarded by Backend.mu)
	keepFlag   bool // guarded by Backend.mu
	inflight   sync.WaitGroup
	touchedAt  atomic.Int64 // last state-file touch
}

// Interface guards
var (
	_ backend.Workspace = (*Workspace)(nil)
	_ backend.Lifecycle = (*Workspace)(nil)
)

// ctrState is a running container as the workspace knows it.
type ctrState struct {
	id      string
	started time.Time
	env     []string     // the container's environment (image + config)
	oomBase atomic.Int64 // OOM kills of its memory cgroup already reported
	// healthy is closed once the health check is done (nil: no check
	// pending, as for an adopted container); healthErr says how it went.
	healthy   chan struct{}
	healthErr error
	agent     agentSlot // wai-agent in this container
}

// wait returns the result of the container's health check.
func (s *ctrState) wait(ctx context.Context) error {
	if s.healthy == nil {
		return nil
	}
	select {
	case <-s.healthy:
		return s.healthErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *ctrState) path() string {
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return defaultPath
}

// Shell returns the workspace's shell.
func (w *Workspace) Shell() backend.Shell { return w.shell }

// FS returns the workspace's filesystem: the host directory behind
// /workspace, confined to it.
func (w *Workspace) FS() backend.Filesystem {
	if w.volume != "" {
		return w.files
	}
	return &workspaceFS{FS: w.fs, w: w}
}

// Dir is the host directory mounted at /workspace; "" for a volume
// workspace, which has none on this machine.
func (w *Workspace) Dir() string {
	if w.volume != "" {
		return ""
	}
	return w.dir
}

// ContainerName is the name of the session's container.
func (w *Workspace) ContainerName() string { return w.name }

func (w *Workspace) keep() bool {
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	return w.keepFlag
}

// enter registers a running command; it fails once the workspace closes.
func (w *Workspace) enter(op string) (func(), error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil, backend.Errorf(backend.ErrUnavailable, op, "", "the workspace of session %s is closed", w.session)
	}
	w.inflight.Add(1)
	w.mu.Unlock()
	w.busy.Add(1)
	w.touch()
	return func() {
		w.touch()
		w.busy.Add(-1)
		w.inflight.Done()
	}, nil
}

// touch records a use, in memory always and in the state file (whose
// modification time other processes read) at most once a second.
func (w *Workspace) touch() {
	now := time.Now()
	w.lastUsed.Store(now.UnixNano())
	if last := w.touchedAt.Load(); now.UnixNano()-last > int64(time.Second) && w.touchedAt.CompareAndSwap(last, now.UnixNano()) {
		touchState(w.statePath, now)
	}
}

// ensure returns the running container, creating it (or adopting the one a
// kept session left under the same name) when there is none.
func (w *Workspace) ensure(ctx context.Context) (*ctrState, error) {
	if w.managed {
		return w.ensureManaged(ctx)
	}
	if err := w.checkDir(ctx); err != nil {
		return nil, err
	}
	if st := w.cur.Load(); st != nil {
		return st, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if st := w.cur.Load(); st != nil {
		return st, nil
	}
	if w.closed {
		return nil, backend.Errorf(backend.ErrUnavailable, "exec", "", "the workspace of session %s is closed", w.session)
	}
	b := w.b
	reason := w.deadReason
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	data, err := containers.Inspect(cctx, w.name, nil)
	switch {
	case err == nil:
		if data.Config == nil || data.Config.Labels[labelManaged] != "true" {
			return nil, backend.Errorf(backend.ErrUnavailable, "exec", w.name,
				"a container named %s exists that wai did not create: remove it (`podman rm -f %s`) or change name_prefix", w.name, w.name)
		}
		if u := data.Config.Labels[labelUser]; u != w.user {
			// Another user's session whose name happens to be this one's:
			// never theirs to remove.
			return nil, backend.Errorf(backend.ErrPermission, "exec", w.name,
				"the container %s belongs to a session of another user: open the session under another name", w.name)
		}
		if reason == "" && data.State != nil && data.State.Running && data.Config.Labels[labelWorkspace] == w.ref() {
			st := &ctrState{id: data.ID, started: data.State.StartedAt, env: data.Config.Env}
			if n, ok := b.oomKills(ctx, st.id); ok {
				st.oomBase.Store(int64(n))
			}
			w.cur.Store(st)
			b.event(ctx, "runtime.podman.reattached", w, "container_id", short(st.id))
			return st, nil
		}
		if ws := data.Config.Labels[labelWorkspace]; reason == "" && ws != w.ref() {
			reason = "it mounted another workspace directory (" + ws + ")"
		} else if reason == "" && data.State != nil {
			reason = "found it " + data.State.Status
			if data.State.OOMKilled {
				reason += " (OOM killed)"
			}
		} else if reason == "" {
			reason = "found it in an unknown state"
		}
		if err := b.remove(ctx, data.ID); err != nil {
			return nil, err
		}
	case notFound(err):
		if reason != "" && !strings.Contains(reason, "removed") {
			reason += "; it was removed"
		}
	default:
		return nil, b.svc.wrap(ctx, "exec", w.name, err)
	}
	st, err := b.createStarted(ctx, w)
	if err != nil {
		return nil, err
	}
	w.deadReason = ""
	w.cur.Store(st)
	if reason != "" {
		b.event(ctx, "runtime.podman.recreated_after_failure", w, "container_id", short(st.id), "reason", reason)
	}
	return st, nil
}

// markDead drops st (if it is still the current container) so that the
// next call recreates the container.
func (w *Workspace) markDead(st *ctrState, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur.CompareAndSwap(st, nil) {
		w.deadReason = reason
	}
}

// retire removes the container st if it is still the current one: the
// idle reaper and the uptime limit use it. The workspace stays; the next
// command starts a fresh container.
func (w *Workspace) retire(ctx context.Context, st *ctrState, event, reason string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.cur.CompareAndSwap(st, nil) {
		return nil
	}
	if err := w.b.remove(ctx, st.id); err != nil {
		return err
	}
	w.b.event(ctx, event, w, "container_id", short(st.id), "reason", reason)
	return nil
}

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

	// Running commands see closing, kill their trees and return.
	waited := make(chan struct{})
	go func() { w.inflight.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
		return fmt.Errorf("close workspace %s: commands still stopping: %w", w.session, ctx.Err())
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
