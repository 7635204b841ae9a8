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

// slackOr is b.slack when set, else d.
func (b *Backend) slackOr(d time.Duration) time.Duration {
	if b.slack > 0 {
		return b.slack
	}
	return d
}
