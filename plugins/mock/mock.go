// Package mock is the test-double backend: commands never run; each
// Execute or ExecuteScript answers with a canned result chosen by
// substring pattern (or a default), every shell call is recorded with its
// request, and the filesystem lives in memory with the same semantics,
// errors, sorting and caps as the real backends. Requests are validated
// against the limits exactly as a real backend validates them, so tool
// tests that run on the mock see the ErrInvalid a real backend would give.
//
// It registers itself as "mock"; its config (JSON, decoded strictly) is
//
//	{"responses": [{"pattern": "make build", "exit_code": 0, "stdout": "ok"}],
//	 "default": {"exit_code": 1, "stderr": "unexpected command"},
//	 "env": {"HOME": "/workspace"}, "which": {"make": "/usr/bin/make"},
//	 "files": {"README.md": "hello\n"}}
package mock

import (
	"context"
	"encoding/json"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

func init() {
	backend.Register(Name, func(_ context.Context, opts backend.Options) (backend.Backend, error) {
		o, err := OptionsFromConfig(opts.Config)
		if err != nil {
			return nil, err
		}
		o.Limits = opts.Limits
		return New(o), nil
	})
}

// Name is the name the backend registers under and reports in Info.
const Name = "mock"

// Root is the workspace root as the mock's commands would see it: result
// and snapshot directories are named under it.
const Root = "/workspace"

// DefaultPath is the PATH of the mock's environment unless Options.Env
// sets one.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin"

// Response is a canned result for every command whose text (argv joined
// with spaces, the shell string, or the interpreter and script) contains
// Pattern. An empty pattern matches every command.
type Response struct {
	Pattern string
	Result  backend.ExecResult
}

// Options configure a mock backend.
type Options struct {
	// Limits every request is checked against; zero means the defaults.
	Limits backend.Limits
	// Responses apply to every workspace, after the workspace's own; the
	// first registered match wins.
	Responses []Response
	// Default answers commands no response matches; nil means exit 0 with
	// no output.
	Default *backend.ExecResult
	// Env is the environment commands would start with; PATH is added
	// when missing.
	Env map[string]string
	// Which maps command names to paths; nil means {"sh": "/bin/sh"}.
	Which map[string]string
	// Files are written into every new workspace (path → content).
	Files map[string]string
}

// Backend is the mock backend. It is safe for concurrent use.
type Backend struct {
	opts Options

	canned // every workspace's, after its own

	mu         sync.Mutex
	closed     bool
	workspaces map[string]*Workspace
}

// New returns a mock backend. Invalid limits surface as ErrInvalid from
// Open.
func New(opts Options) *Backend {
	if opts.Limits == (backend.Limits{}) {
		opts.Limits = backend.DefaultLimits()
	}
	env := map[string]string{"PATH": DefaultPath, "HOME": Root}
	if opts.Env != nil {
		env = maps.Clone(opts.Env)
		if _, ok := env["PATH"]; !ok {
			env["PATH"] = DefaultPath
		}
	}
	opts.Env = env
	if opts.Which == nil {
		opts.Which = map[string]string{"sh": "/bin/sh"}
	} else {
		opts.Which = maps.Clone(opts.Which)
	}
	b := &Backend{opts: opts, workspaces: map[string]*Workspace{}}
	for _, r := range opts.Responses {
		b.responses = append(b.responses, cloneResponse(r))
	}
	if opts.Default != nil {
		d := cloneResult(*opts.Default)
		b.def = &d
	}
	return b
}

// Workspace returns the workspace of an open (or kept) session.
func (b *Backend) Workspace(session string) (*Workspace, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.workspaces[session]
	return w, ok
}

// Open returns the session's workspace: the one already open or kept, or
// a new one holding Options.Files.
func (b *Backend) Open(ctx context.Context, spec backend.WorkspaceSpec) (backend.Workspace, error) {
	if err := ctx.Err(); err != nil {
		return nil, cancelled("open", err)
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := b.opts.Limits.Validate(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, backend.Errorf(backend.ErrUnavailable, "open", "", "the mock backend is closed; create a new one")
	}
	if w, ok := b.workspaces[spec.Session]; ok {
		w.spec = spec
		w.closed.Store(false)
		return w, nil
	}
	w := newWorkspace(b, spec)
	for p, c := range b.opts.Files {
		if _, err := w.fs.Write(ctx, backend.WriteRequest{Path: p, Content: c, Mode: backend.WriteOverwrite}); err != nil {
			return nil, err
		}
	}
	b.workspaces[spec.Session] = w
	return w, nil
}

// Close closes every workspace; later Opens fail with ErrUnavailable.
func (b *Backend) Close(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s, w := range b.workspaces {
		w.closed.Store(true)
		w.endJobs()
		delete(b.workspaces, s)
	}
	return nil
}

// ResultConfig is a canned result in JSON config.
type ResultConfig struct {
	ExitCode   int    `json:"exit_code"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	TimedOut   bool   `json:"timed_out"`
	Signal     int    `json:"signal"`
	Truncated  bool   `json:"truncated"`
	DurationMS int64  `json:"duration_ms"`
}

// Result converts the config form to an ExecResult.
func (r ResultConfig) Result() backend.ExecResult {
	return backend.ExecResult{ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr, TimedOut: r.TimedOut,
		Signal: r.Signal, Truncated: r.Truncated, Duration: time.Duration(r.DurationMS) * time.Millisecond}
}

// ResponseConfig is a canned response in JSON config.
type ResponseConfig struct {
	Pattern string `json:"pattern"`
	ResultConfig
}

// Config is the backend's JSON config.
type Config struct {
	Responses []ResponseConfig  `json:"responses"`
	Default   *ResultConfig     `json:"default"`
	Env       map[string]string `json:"env"`
	Which     map[string]string `json:"which"`
	Files     map[string]string `json:"files"`
}

// OptionsFromConfig decodes the backend's JSON config strictly (an
// unknown field is ErrInvalid). Limits are left zero.
func OptionsFromConfig(raw json.RawMessage) (Options, error) {
	var c Config
	if err := backend.DecodeConfig(Name, raw, &c); err != nil {
		return Options{}, err
	}
	if err := backend.DefaultLimits().CheckEnv("config", c.Env); err != nil {
		return Options{}, err
	}
	o := Options{Env: c.Env, Which: c.Which, Files: c.Files}
	for _, r := range c.Responses {
		o.Responses = append(o.Responses, Response{Pattern: r.Pattern, Result: r.Result()})
	}
	if c.Default != nil {
		d := c.Default.Result()
		o.Default = &d
	}
	return o, nil
}

// Workspace is one session's mock workspace.
type Workspace struct {
	b      *Backend
	spec   backend.WorkspaceSpec
	closed atomic.Bool
	shell  *Shell
	fs     *FS
	jobs   mockJobs
}

func newWorkspace(b *Backend, spec backend.WorkspaceSpec) *Workspace {
	w := &Workspace{b: b, spec: spec}
	w.shell = &Shell{ws: w}
	w.fs = newFS(w)
	return w
}

// Shell returns the workspace's shell; MockShell gives the same with its
// recording and response methods.
func (w *Workspace) Shell() backend.Shell { return w.shell }

// FS returns the workspace's in-memory filesystem.
func (w *Workspace) FS() backend.Filesystem { return w.fs }

// MockShell returns the shell as a *Shell.
func (w *Workspace) MockShell() *Shell { return w.shell }

// Session is the workspace's session name.
func (w *Workspace) Session() string { return w.spec.Session }

// Close ends the session; unless the spec said Keep, its files are gone
// and a later Open starts empty.
func (w *Workspace) Close(context.Context) error {
	w.closed.Store(true)
	if w.spec.Keep {
		return nil
	}
	w.endJobs()
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	if w.b.workspaces[w.spec.Session] == w {
		delete(w.b.workspaces, w.spec.Session)
	}
	return nil
}

func (w *Workspace) limits() backend.Limits { return w.b.opts.Limits }

// live fails when the workspace is closed or the call cancelled.
func (w *Workspace) live(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return cancelled(op, err)
	}
	if w.closed.Load() {
		return backend.Errorf(backend.ErrUnavailable, op, "", "workspace %q is closed; open the session again", w.spec.Session)
	}
	return nil
}

// cancelled wraps a context error so that both errors.Is(err,
// context.Canceled) and the backend kind work.
func cancelled(op string, err error) error {
	return &backend.Error{Kind: backend.ErrUnavailable, Op: op, Msg: "call cancelled", Err: err}
}

// Interface guards
var (
	_ backend.Backend   = (*Backend)(nil)
	_ backend.Workspace = (*Workspace)(nil)
)
