//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// open opens the backend for the driver (driver.go).
func open(ctx context.Context, opts backend.Options) (backend.Backend, error) { return New(ctx, opts) }

// Backend runs sessions in Podman containers. It is safe for concurrent
// use; sessions never wait on one another (each has its own lock).
type Backend struct {
	cfg    Config
	limits backend.Limits
	log    *slog.Logger
	svc    *service
	pull   puller
	owner  *ownerIDs // who owns workspace files; nil when not root
	// seccompDir holds the profile every container runs under (see
	// seccompProfile); the service reads it from there.
	seccompDir string
	// agentBin is the host path of the wai-agent binary mounted into
	// every container; "" when there is none (agent = false, or no
	// binary), and commands run as Podman execs.
	agentBin string
	// svcFiles: where the service's machine has the seccomp profile and
	// the agent, for a volume configuration (service_files.go).
	svcFiles serviceFiles
	// slack, when set, replaces the fixed waits the host adds past a
	// deadline before it acts itself (overdueSlack, agentDeadlineSlack,
	// agentCancelWait): the tests of those fallbacks wait a second, not
	// ten (see slackOr).
	slack time.Duration

	mu      sync.Mutex
	open    map[string]*Workspace
	opening map[string]chan struct{} // sessions being opened
	closed  bool

	stopReaper context.CancelFunc
	reaperDone chan struct{}
}

// Interface guards
var (
	_ backend.Backend          = (*Backend)(nil)
	_ backend.SessionLister    = (*Backend)(nil)
	_ backend.SessionRemover   = (*Backend)(nil)
	_ backend.GarbageCollector = (*Backend)(nil)
)

// New opens the backend: it decodes opts.Config (see Config) and checks
// that the Podman service answers, so a missing service is reported here,
// as backend.ErrUnavailable with what to do, and a fallback can step in.
func New(ctx context.Context, opts backend.Options) (*Backend, error) {
	cfg, err := ParseConfig(opts.Config, opts.StateDir)
	if err != nil {
		return nil, err
	}
	return newBackend(ctx, cfg, opts)
}

// newBackend opens a backend on a resolved configuration.
func newBackend(ctx context.Context, cfg Config, opts backend.Options) (*Backend, error) {
	opts, err := opts.WithDefaults()
	if err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg, limits: opts.Limits, log: opts.Logger, svc: newService(cfg.URL, cfg.Identity),
		open: map[string]*Workspace{}, opening: map[string]chan struct{}{}, reaperDone: make(chan struct{})}
	b.pull.image, b.pull.local = cfg.Image, cfg.imageDefault
	if os.Geteuid() == 0 {
		uid, gid := cfg.uidGID()
		b.owner = &ownerIDs{uid: uid, gid: gid}
	}
	if _, err := b.svc.ctx(ctx); err != nil {
		return nil, err
	}
	if cfg.workspaceBytes > 0 && !cfg.volumeMode() {
		if err := checkVolumeSupport(cfg.workspaceBytes); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(cfg.fixedDir(), 0o711); err != nil {
		return nil, backend.Errorf(backend.ErrUnavailable, "open", cfg.fixedDir(), "cannot create the workspace directory: %v", err)
	}
	b.seccompDir = filepath.Join(cfg.fixedDir(), seccompDirName)
	if _, err := writeSeccompProfile(b.seccompDir); err != nil {
		return nil, err
	}
	if b.agentBin, err = provisionAgent(cfg, cfg.fixedDir()); err != nil {
		return nil, err
	}
	if b.agentBin == "" && cfg.agentEnabled() {
		b.log.LogAttrs(ctx, slog.LevelInfo, "runtime.podman.agent_missing",
			slog.String("reason", "this build carries no wai-agent and agent_path is unset: every command runs as a Podman exec (build with `make build`)"))
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b.stopReaper = cancel
	go b.reap(rctx)
	return b, nil
}

// uidGID returns the numeric user and group of a validated User.
func (c Config) uidGID() (int, int) {
	u, g, _ := strings.Cut(c.User, ":")
	uid, _ := strconv.Atoi(u)
	gid, _ := strconv.Atoi(g)
	return uid, gid
}

// Config returns the backend's resolved configuration.
func (b *Backend) Config() Config { return b.cfg }

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

// Close stops the reaper and closes the workspaces still open.
func (b *Backend) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	var ws []*Workspace
	for _, w := range b.open {
		w.refs = 1
		ws = append(ws, w)
	}
	b.mu.Unlock()
	b.stopReaper()
	<-b.reaperDone
	var first error
	for _, w := range ws {
		if err := w.Close(ctx); err != nil && first == nil {
			first = err
		}
	}
	b.svc.drop()
	return first
}

// event logs a lifecycle event of w.
func (b *Backend) event(ctx context.Context, name string, w *Workspace, kv ...any) {
	a := append([]slog.Attr{slog.String("session", w.session), slog.String("container", w.name)}, attrs(kv...)...)
	b.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelInfo, name, a...)
}

func attrs(kv ...any) []slog.Attr {
	var out []slog.Attr
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, slog.Any(fmt.Sprint(kv[i]), kv[i+1]))
	}
	return out
}

// reap removes containers idle longer than idle_timeout or up longer than
// max_uptime, and sweeps what other processes left behind the way GC does.
func (b *Backend) reap(ctx context.Context) {
	defer close(b.reaperDone)
	idle, uptime := time.Duration(b.cfg.IdleTimeout), time.Duration(b.cfg.MaxUptime)
	if idle == 0 && uptime == 0 {
		<-ctx.Done()
		return
	}
	period := time.Minute
	for _, d := range []time.Duration{idle, uptime} {
		if d > 0 {
			period = min(period, max(d/4, 50*time.Millisecond))
		}
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	lastSweep := time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			b.reapOnce(ctx, now)
			if idle > 0 && now.Sub(lastSweep) >= max(idle/4, time.Minute) {
				lastSweep = now
				sctx, cancel := context.WithTimeout(ctx, time.Minute)
				// Only this configuration's sessions: another's kept
				// session goes by its own idle_timeout, not this one's.
				rep, err := gcIn(sctx, b.svc, b.cfg, gcScope{ours: true}, now)
				cancel()
				for _, it := range rep.Removed {
					b.log.LogAttrs(ctx, slog.LevelInfo, "runtime.podman.idle_cleanup", slog.String("session", it.Session),
						slog.String(it.Kind, it.Name), slog.String("reason", it.Reason))
				}
				if err != nil {
					b.log.LogAttrs(ctx, slog.LevelWarn, "runtime.podman.sweep_failed", slog.String("error", err.Error()))
				}
			}
		}
	}
}

func (b *Backend) reapOnce(ctx context.Context, now time.Time) {
	b.mu.Lock()
	ws := make([]*Workspace, 0, len(b.open))
	for _, w := range b.open {
		ws = append(ws, w)
	}
	b.mu.Unlock()
	idle, uptime := time.Duration(b.cfg.IdleTimeout), time.Duration(b.cfg.MaxUptime)
	for _, w := range ws {
		st := w.cur.Load()
		if st == nil {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		var err error
		switch {
		case uptime > 0 && now.Sub(st.started) > uptime:
			err = w.retire(rctx, st, "runtime.podman.removed", fmt.Sprintf("up longer than max_uptime %s", uptime))
		case idle > 0 && w.busy.Load() == 0 && now.Sub(time.Unix(0, w.lastUsed.Load())) > idle && w.jobsRun(rctx, st):
			w.touch() // a running background job counts as use
		case idle > 0 && w.busy.Load() == 0 && now.Sub(time.Unix(0, w.lastUsed.Load())) > idle:
			err = w.retire(rctx, st, "runtime.podman.idle_cleanup", fmt.Sprintf("idle longer than idle_timeout %s", idle))
		}
		cancel()
		if err != nil {
			b.log.LogAttrs(ctx, slog.LevelWarn, "runtime.podman.reap_failed", slog.String("session", w.session), slog.String("error", err.Error()))
		}
	}
}

// slackOr is b.slack when set, else d.
func (b *Backend) slackOr(d time.Duration) time.Duration {
	if b.slack > 0 {
		return b.slack
	}
	return d
}
