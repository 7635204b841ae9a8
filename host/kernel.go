package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/internal/sweep"
	"github.com/wai-dev/wai/host/internal/wasm"
)

// Kernel is the single enforcement point between callers and backends. It
// is safe for concurrent use.
type Kernel struct {
	cfg      Config
	log      *slog.Logger
	stateDir string
	chain    *policyChain
	audit    *os.File // nil without audit_log

	injected backend.Backend // WithBackend; used instead of cfg.Backend
	user     string          // WithUser: the user of sessions opened without one

	// rt runs the Wasm plugins; nil when the config loads none. plugins
	// are the ones the kernel loaded (and closes); tools is written in New
	// and only read afterwards.
	rt      *wasm.Runtime
	plugins []*wasm.Plugin
	tools   map[string]*toolEntry
	// exported holds every tool name the plugins export (aliases
	// applied), disabled ones included: what disabled_tools may name.
	exported map[string]bool

	mu       sync.Mutex
	backends map[string]backend.Backend // opened lazily, by name
	chosen   *resolved                  // the sessions' backend, once chosen (resolve)
	choosing chan struct{}              // non-nil while a goroutine chooses it
	sessions map[string]*Session
	closed   bool

	stopReaper context.CancelFunc
	reaperDone chan struct{}
}

// Option configures New.
type Option func(*options)

type options struct {
	logger   *slog.Logger
	backend  backend.Backend
	policies []Policy
	tools    []injectedTool
	bundled  fs.FS // plugins built into the program (WithBundledPlugins)
	user     string
}

// injectedTool is a tool plugin handed in by a test instead of loaded.
type injectedTool struct {
	p       toolPlugin
	aliases map[string]string
}

// withTools registers tool plugins that are not loaded from files (tests
// use Go implementations); the kernel does not close them.
func withTools(p toolPlugin, aliases map[string]string) Option {
	return func(o *options) { o.tools = append(o.tools, injectedTool{p, aliases}) }
}

// WithLogger sends the kernel's events to l (default: discarded, unless
// audit_log is set).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithBackend makes every session use b instead of opening cfg.Backend by
// name. The kernel does not close b: its owner does.
func WithBackend(b backend.Backend) Option { return func(o *options) { o.backend = b } }

// WithPolicy appends a Go policy to the chain, after the configured ones.
// Embedders use it for rules that need no plugin.
func WithPolicy(p Policy) Option { return func(o *options) { o.policies = append(o.policies, p) } }

// New builds a kernel from cfg. It validates the configuration, opens the
// audit log and loads the policies; backends and workspaces open lazily,
// on a session's first capability use.
func New(ctx context.Context, cfg Config, opts ...Option) (*Kernel, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.clone() // the caller's maps stay the caller's
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.user != "" {
		if err := backend.ValidUser(o.user); err != nil {
			return nil, err
		}
	}
	stateDir, err := cfg.ResolvedStateDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, backend.Errorf(backend.ErrInvalid, "config", stateDir, "cannot create state_dir: %v", err)
	}
	k := &Kernel{
		cfg:      cfg,
		stateDir: stateDir,
		injected: o.backend,
		user:     o.user,
		backends: map[string]backend.Backend{},
		sessions: map[string]*Session{},
		tools:    map[string]*toolEntry{},
		exported: map[string]bool{},
	}
	handler := slog.Handler(slog.DiscardHandler)
	if o.logger != nil {
		handler = o.logger.Handler()
	}
	if cfg.AuditLog != "" {
		f, err := os.OpenFile(cfg.AuditLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, backend.Errorf(backend.ErrInvalid, "config", cfg.AuditLog, "cannot open audit_log: %v", err)
		}
		k.audit = f
		handler = newTeeHandler(handler, slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	k.log = slog.New(&sinkHandler{next: handler})

	if err := k.load(ctx, o); err != nil {
		_ = k.closePlugins(context.WithoutCancel(ctx))
		k.closeAudit()
		return nil, err
	}
	if cfg.SessionIdleTimeout > 0 {
		rctx, cancel := context.WithCancel(context.Background())
		k.stopReaper, k.reaperDone = cancel, make(chan struct{})
		go k.reap(rctx, cfg.SessionIdleTimeout)
	}
	return k, nil
}

// load starts the plugin runtime when the config needs one, then loads the
// policies and the tools.
func (k *Kernel) load(ctx context.Context, o options) error {
	if needsRuntime(k.cfg) {
		rt, err := wasm.NewRuntime(ctx, wasm.Options{
			CacheDir:               filepath.Join(k.stateDir, "wasm"),
			CheckTimeout:           k.cfg.PolicyTimeout,
			SessionConcurrentCalls: k.cfg.SessionConcurrentCalls,
			MemoryBudgetBytes:      k.cfg.PluginMemoryBudget,
			Logger:                 k.log,
		})
		if err != nil {
			return err
		}
		k.rt = rt
	}
	policies, err := k.loadPolicies(ctx)
	if err != nil {
		return err
	}
	k.chain = &policyChain{policies: append(policies, o.policies...), timeout: k.cfg.PolicyTimeout, log: k.log}
	if err := k.loadTools(ctx, o.tools, o.bundled); err != nil {
		return err
	}
	return k.checkDisabledTools()
}

// Config returns a copy of the configuration the kernel runs with:
// changing it changes nothing in the kernel.
func (k *Kernel) Config() Config { return k.cfg.clone() }

// Logger returns the logger events go to.
func (k *Kernel) Logger() *slog.Logger { return k.log }

// Close closes every session, then the backends the kernel opened and the
// audit log. Calling it again does nothing.
func (k *Kernel) Close(ctx context.Context) error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	k.closed = true
	sessions := make([]*Session, 0, len(k.sessions))
	for _, s := range k.sessions {
		sessions = append(sessions, s)
	}
	k.mu.Unlock()

	if k.stopReaper != nil {
		k.stopReaper()
		<-k.reaperDone
	}
	var errs []error
	for _, s := range sessions {
		if err := s.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	k.mu.Lock()
	backends := k.backends
	k.backends = map[string]backend.Backend{}
	k.mu.Unlock()
	for name, b := range backends {
		if err := b.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close backend %s: %w", name, err))
		}
	}
	if err := k.closePolicies(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := k.closePlugins(ctx); err != nil {
		errs = append(errs, err)
	}
	k.closeAudit()
	return errors.Join(errs...)
}

func (k *Kernel) closeAudit() {
	if k.audit != nil {
		_ = k.audit.Sync()
		_ = k.audit.Close()
	}
}

func (k *Kernel) closePolicies(ctx context.Context) error {
	var errs []error
	for _, p := range k.chain.policies {
		if c, ok := p.(interface{ Close(context.Context) error }); ok {
			if err := c.Close(ctx); err != nil {
				errs = append(errs, fmt.Errorf("close policy %s: %w", p.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// openWorkspace opens the session's workspace on the kernel's backend:
// the configured one, or the fallback when the configured one was
// unavailable when the kernel chose (see Info).
func (k *Kernel) openWorkspace(ctx context.Context, spec backend.WorkspaceSpec) (ws backend.Workspace, fellBack bool, err error) {
	r, err := k.resolve(ctx)
	if err != nil {
		return nil, false, err
	}
	ws, err = r.b.Open(ctx, spec)
	return ws, r.info.Fallback, err
}

// backend returns the named backend, opening it on first use. A failed
// open is not remembered, so a service that comes up later is found.
func (k *Kernel) backend(ctx context.Context, name string) (backend.Backend, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, errKernelClosed()
	}
	if b, ok := k.backends[name]; ok {
		return b, nil
	}
	opts, err := k.backendOptions(name)
	if err != nil {
		return nil, err
	}
	b, err := backend.Open(ctx, name, opts)
	if err != nil {
		return nil, k.atConfigLine(name, err)
	}
	k.backends[name] = b
	return b, nil
}

// backendOptions are what the named backend is opened (or checked) with:
// its table of the configuration, as JSON, the limits and the state
// directory.
func (k *Kernel) backendOptions(name string) (backend.Options, error) {
	var raw json.RawMessage
	if t, ok := k.cfg.Backends[name]; ok {
		var err error
		if raw, err = json.Marshal(t); err != nil {
			return backend.Options{}, backend.Errorf(backend.ErrInvalid, "config", "", "[backends.%s] cannot be passed on as JSON: %v", name, err)
		}
	}
	return backend.Options{
		Config:   raw,
		Limits:   k.cfg.Limits,
		StateDir: k.stateDir,
		Logger:   k.log.With(slog.String("backend", name)),
	}, nil
}

// unknownBackendField matches the backend parsers' message for a key they
// do not know (backend.DecodeConfig).
var unknownBackendField = regexp.MustCompile(`unknown field "([^"]+)" in \[backends\.`)

// atConfigLine adds the file and line of the key a backend refused, which
// the backend, given its table as JSON, cannot know.
func (k *Kernel) atConfigLine(name string, err error) error {
	m := unknownBackendField.FindStringSubmatch(err.Error())
	if m == nil || !errors.Is(err, backend.ErrInvalid) {
		return err
	}
	if k.cfg.BackendKeyLine == nil {
		return err
	}
	if n := k.cfg.BackendKeyLine(name, m[1]); n > 0 {
		return fmt.Errorf("%w (%s, line %d)", err, k.cfg.Source, n)
	}
	return err
}

// reap releases what sessions idle for longer than idle hold (a running
// container), never their files: a client that stays connected but quiet
// finds its workspace as it left it, and the next call recreates what was
// released. Only a session's owner closes it (or wai rm, or wai gc once no
// process holds it). It checks a few times per idle period, so a session
// holds its resources at most about 1.25 × idle unused.
func (k *Kernel) reap(ctx context.Context, idle time.Duration) {
	defer close(k.reaperDone)
	sweep.Every(ctx, idle, func(now time.Time) {
		for _, s := range k.idleSessions(now, idle) {
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			s.releaseIfIdle(cctx, idle)
			cancel()
		}
	})
}

func (k *Kernel) idleSessions(now time.Time, idle time.Duration) []*Session {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []*Session
	for _, s := range k.sessions {
		if s.idleFor(now) > idle {
			out = append(out, s)
		}
	}
	return out
}

func errKernelClosed() error {
	return backend.Errorf(backend.ErrUnavailable, "kernel", "", "the kernel is closed: build a new one with host.New")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b)
}
