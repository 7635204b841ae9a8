//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
