package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/wai-dev/wai/host/backend"
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

// SessionOptions shape a new session; they are ignored when the session
// already exists.
type SessionOptions struct {
	// User owns the session (default: the kernel's WithUser, else none).
	// Users are kept apart: the session "proj" of alice and that of bob
	// are two sessions with their own files, and neither can reach the
	// other's. Backends with per-user roots use it in their paths.
	User string
	// Keep leaves the workspace's files (and container) behind on Close,
	// for a later session of the same name.
	Keep bool
	// Tools, when not nil, are the only tools Call runs for the session.
	Tools []string
	// Approver asks a person when a policy answers ask; nil treats ask
	// as deny (with the policy's reason and the config key that would
	// allow the action).
	Approver Approver
}

// Session returns the named session of opts.User, creating it if needed.
// An empty name creates a throwaway session with a fresh random name.
// Creating a session is cheap: its workspace opens on first use.
//
// A user's session is known to the kernel and its backend by a key that
// includes the user (backend.SessionKey); Session.Name returns it, and
// Session (and Call) accept it back for a session this kernel has open.
func (k *Kernel) Session(ctx context.Context, name string, opts SessionOptions) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if name == "" {
		name = "tmp-" + randomHex(6)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, errKernelClosed()
	}
	if s, ok := k.sessions[name]; ok && opts.User == "" && backend.IsUserKey(name) {
		s.touch() // a key Session.Name handed out
		return s, nil
	}
	user := opts.User
	if user == "" {
		user = k.user
	}
	key, err := sessionKey(name, user)
	if err != nil {
		return nil, err
	}
	spec := backend.WorkspaceSpec{Session: key, User: user, Keep: opts.Keep}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if s, ok := k.sessions[key]; ok {
		s.touch()
		return s, nil
	}
	s := newSession(k, spec, opts.Tools)
	s.approver = opts.Approver
	s.loadReads(ctx)
	k.sessions[key] = s
	k.log.LogAttrs(ctx, slog.LevelDebug, "session.created", slog.String("session", key), slog.String("user", user), slog.Bool("keep", opts.Keep))
	return s, nil
}

// Sessions lists the names of the open sessions.
func (k *Kernel) Sessions() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	names := make([]string, 0, len(k.sessions))
	for n := range k.sessions {
		names = append(names, n)
	}
	return names
}

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

// forget drops a closed session from the table.
func (k *Kernel) forget(s *Session) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.sessions[s.spec.Session] == s {
		delete(k.sessions, s.spec.Session)
	}
}

func errKernelClosed() error {
	return backend.Errorf(backend.ErrUnavailable, "kernel", "", "the kernel is closed: build a new one with host.New")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b)
}
