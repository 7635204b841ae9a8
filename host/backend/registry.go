package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// Backend opens workspaces. One Backend serves many sessions; it is safe
// for concurrent use.
type Backend interface {
	// Open returns the workspace of spec.Session, creating its resources
	// lazily (a container starts on first use, not here). Opening a session
	// that is already open, or that a previous process kept, reattaches to it.
	Open(ctx context.Context, spec WorkspaceSpec) (Workspace, error)
	// Close releases the backend's own resources; open workspaces should be
	// closed first.
	Close(ctx context.Context) error
}

// WorkspaceSpec names the workspace to open.
type WorkspaceSpec struct {
	Session string // required; [A-Za-z0-9_.-], at most 64 bytes
	// User is optional; see ValidUser. Backends use it in per-user roots;
	// the kernel also makes Session a per-user key (see SessionKey).
	User string
	// Keep: closing the workspace releases this process's hold on it but
	// leaves its files (and container) in place for a later Open with the
	// same session, until idle cleanup or garbage collection removes them.
	Keep bool
}

// Validate checks the session and user names, which end up in paths and
// container names.
func (s WorkspaceSpec) Validate() error {
	if err := validName("session", s.Session, true); err != nil {
		return err
	}
	if s.User == "" {
		return nil
	}
	return ValidUser(s.User)
}

func validName(what, s string, required bool) error {
	if s == "" {
		if required {
			return Errorf(ErrInvalid, "open", "", "%s name is empty", what)
		}
		return nil
	}
	if len(s) > 64 || s == "." || s == ".." {
		return Errorf(ErrInvalid, "open", "", "%s name %q must be 1–64 characters and not . or ..", what, s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return Errorf(ErrInvalid, "open", "", "%s name %q may only use letters, digits, '_', '-' and '.'", what, s)
		}
	}
	return nil
}

// Workspace is one session's sandbox: a shell and a filesystem that see the
// same files. Its methods are safe for concurrent use.
type Workspace interface {
	Shell() Shell
	FS() Filesystem
	// Close ends the session: unless the spec said Keep, the workspace's
	// files and container are removed.
	Close(ctx context.Context) error
}

// Lifecycle is implemented by workspaces whose sandbox can be started and
// stopped explicitly (a container). Others have nothing to start.
type Lifecycle interface {
	Start(ctx context.Context) (LifecycleState, error)
	// Stop removes the sandbox; its files stay and the next use starts a
	// fresh one.
	Stop(ctx context.Context) (LifecycleState, error)
	State(ctx context.Context) (LifecycleState, error)
}

// LifecycleState describes a workspace's sandbox.
type LifecycleState struct {
	Name       string // e.g. the container name
	Running    bool
	StartedAt  time.Time
	LastUsedAt time.Time
	// JobsEnded is how many running background jobs a Stop ended: the
	// kernel counts them (a backend leaves it 0).
	JobsEnded int
}

// Options configure a backend when it is opened.
type Options struct {
	// Config is the backend's own settings (its TOML table, as JSON). The
	// backend decodes it strictly: an unknown field is ErrInvalid.
	Config json.RawMessage
	Limits Limits
	// StateDir is where the backend keeps workspace directories and other
	// state (for example ${cache}/wai).
	StateDir string
	// Logger receives the backend's events (for example
	// runtime.podman.created); never nil after Open.
	Logger *slog.Logger
}

// Driver makes backends of one kind: the registry holds one per name. A
// driver may also implement optional interfaces for what needs no open
// backend (Preflighter), found by type assertion.
type Driver interface {
	Open(ctx context.Context, opts Options) (Backend, error)
}

// Factory creates a backend: the Driver of a backend that needs nothing
// more.
type Factory func(ctx context.Context, opts Options) (Backend, error)

// Open calls f.
func (f Factory) Open(ctx context.Context, opts Options) (Backend, error) { return f(ctx, opts) }

var (
	registryMu sync.RWMutex
	registry   = map[string]Driver{}
)

// Register makes a backend available by name. Backends call it from init;
// registering a name twice panics, as database/sql does.
func Register(name string, f Factory) {
	if f == nil {
		panic("backend: Register factory is nil for " + name)
	}
	RegisterDriver(name, f)
}

// RegisterDriver is Register for a driver with optional interfaces.
func RegisterDriver(name string, d Driver) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if d == nil {
		panic("backend: RegisterDriver driver is nil for " + name)
	}
	if _, dup := registry[name]; dup {
		panic("backend: Register called twice for " + name)
	}
	registry[name] = d
}

// Registered lists the linked-in backends, sorted.
func Registered() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return slices.Sorted(maps.Keys(registry))
}

// driver returns the named driver, or the error for a name not linked in.
func driver(name string) (Driver, error) {
	registryMu.RLock()
	d, ok := registry[name]
	registryMu.RUnlock()
	if ok {
		return d, nil
	}
	linked := Registered()
	if n := Nearest(name, linked); n != "" {
		return nil, Errorf(ErrInvalid, "open", "", "unknown backend %q; did you mean %q? (linked in: %v)", name, n, linked)
	}
	// The registry knows only what is linked: a backend it has never heard
	// of may be one this program was built without. Backends register
	// themselves when their package is imported, so the fix is an import;
	// wai's own live under its module's plugins/ directory.
	return nil, Errorf(ErrUnavailable, "open", "", "backend %q is not linked into this program (linked in: %v): "+
		"a backend is linked in by importing its package; for one of wai's own add `import _ %q`", name, linked, ownBackendPackage(name))
}

// ownBackendPackage is where wai keeps the backend name, if it is one of
// wai's own: plugins/NAME beside this package's host/backend.
func ownBackendPackage(name string) string {
	module := strings.TrimSuffix(reflect.TypeFor[Options]().PkgPath(), "/host/backend")
	return module + "/plugins/" + name
}

// Open creates the named backend. Options left zero get defaults (limits,
// a discarding logger); the limits are validated first.
func Open(ctx context.Context, name string, opts Options) (Backend, error) {
	d, err := driver(name)
	if err != nil {
		return nil, err
	}
	if opts, err = opts.WithDefaults(); err != nil {
		return nil, err
	}
	b, err := d.Open(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("open backend %s: %w", name, err)
	}
	return b, nil
}

// WithDefaults returns opts with what was left zero defaulted (the
// limits, a discarding logger) and the limits validated: what Open hands a
// driver, and what a backend's own constructor, called directly, applies
// the same way.
func (opts Options) WithDefaults() (Options, error) {
	if opts.Limits == (Limits{}) {
		opts.Limits = DefaultLimits()
	}
	if err := opts.Limits.Validate(); err != nil {
		return opts, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return opts, nil
}

// DecodeConfig decodes a backend's raw config into v, rejecting unknown
// fields. An empty config leaves v as it is (its defaults).
func DecodeConfig(name string, raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := DecodeStrict(raw, v); err != nil {
		return Errorf(ErrInvalid, "config", "", "%s", configAdvice(name, err, v))
	}
	return nil
}

// errTrailing is DecodeStrict's error for data after the JSON value.
var errTrailing = errors.New("trailing data after the JSON value")

// DecodeStrict decodes one JSON value into v, refusing fields v does not
// have and anything after the value: the one strict decoder of the host
// side (the kernel, the plugin runtime, backends). Guests have the pdk's,
// and policies policies/internal/plugconf's, since neither may import this
// package.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytesReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	// The bytes after the value, not dec.More: More reads on into the
	// next token and lets a stray ']' or '}' through.
	if len(bytesTrimSpace(data[dec.InputOffset():])) > 0 {
		return errTrailing
	}
	return nil
}
