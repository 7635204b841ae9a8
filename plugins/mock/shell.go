package mock

import (
	"context"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// CallKind names the shell operation a Call recorded.
type CallKind string

const (
	CallExecute CallKind = "execute"
	CallScript  CallKind = "script"
	CallWhich   CallKind = "which"
	CallEnv     CallKind = "env"
)

// Call is one recorded shell call, refused ones included (Err set).
type Call struct {
	Kind    CallKind
	Session string
	Exec    backend.ExecRequest   // CallExecute
	Script  backend.ScriptRequest // CallScript
	Command string                // CallWhich
	Result  backend.ExecResult    // what Execute or ExecuteScript returned
	Err     error
}

// Shell is the mock's shell: canned results, every call recorded.
type Shell struct {
	ws *Workspace
	canned
}

func (s *Shell) record(c Call) {
	c.Session = s.ws.spec.Session
	s.canned.record(c)
	s.ws.b.record(c)
}

// Execute validates req as a real backend would and answers with the
// matching canned result.
func (s *Shell) Execute(ctx context.Context, req backend.ExecRequest) (res backend.ExecResult, err error) {
	req = cloneExec(req)
	defer func() { s.record(Call{Kind: CallExecute, Exec: req, Result: res, Err: err}) }()
	text := req.Shell
	if text == "" {
		text = strings.Join(req.Argv, " ")
	}
	return s.run(ctx, "exec", req.Command(), text, req.Cwd, req.DiscardOutput, req.Output, func(l backend.Limits) error {
		_, err := l.CheckExec(req)
		return err
	})
}

// ExecuteScript validates req and answers with the result matching the
// interpreter and script ("python3 print(1)"). The result's command is the
// interpreter followed by "<script>".
func (s *Shell) ExecuteScript(ctx context.Context, req backend.ScriptRequest) (res backend.ExecResult, err error) {
	req = cloneScript(req)
	defer func() { s.record(Call{Kind: CallScript, Script: req, Result: res, Err: err}) }()
	interp := req.Interpreter
	if interp == "" {
		interp = backend.DefaultInterpreter
	}
	return s.run(ctx, "exec.script", []string{interp, "<script>"}, interp+" "+req.Script, req.Cwd, req.DiscardOutput, req.Output,
		func(l backend.Limits) error {
			_, err := l.CheckScript(req)
			return err
		})
}

func (s *Shell) run(ctx context.Context, op string, command []string, text, cwd string, discard bool,
	live backend.OutputFunc, check func(backend.Limits) error) (backend.ExecResult, error) {
	if err := s.ws.live(ctx, op); err != nil {
		return backend.ExecResult{}, err
	}
	l := s.ws.limits()
	if err := check(l); err != nil {
		return backend.ExecResult{}, err
	}
	dir, err := s.ws.fs.dir(op, cwd)
	if err != nil {
		return backend.ExecResult{}, err
	}
	res := s.answer(text)
	if live != nil && !discard {
		replay(live, res)
	}
	return stamp(res, l, command, path.Join(Root, dir), discard), nil
}

// replay hands a canned result's output to a live-output sink the way a
// command that printed it would: a line per chunk, raw (before the cap),
// stdout then stderr. The mock cannot stream as a command runs; it
// delivers the output before Execute returns, as the contract allows.
func replay(live backend.OutputFunc, res backend.ExecResult) {
	for _, o := range []struct {
		stream backend.Stream
		text   string
	}{{backend.Stdout, res.Stdout}, {backend.Stderr, res.Stderr}} {
		for line := range strings.SplitAfterSeq(o.text, "\n") {
			if line != "" {
				live(o.stream, []byte(line))
			}
		}
	}
}

// answer picks the canned result for a command: a response of the
// workspace, then of the backend, then the workspace's default, then the
// backend's, then exit 0 with no output. Patterns come before defaults at
// both levels, so a workspace default never hides a backend response.
func (s *Shell) answer(text string) backend.ExecResult {
	r, ok, def := s.match(text)
	if ok {
		return r
	}
	r, ok, bdef := s.ws.b.match(text)
	switch {
	case ok:
		return r
	case def != nil:
		return *def
	case bdef != nil:
		return *bdef
	}
	return backend.ExecResult{}
}

// stamp fills in what the request decides: where the command ran, what
// it was, and the bounds a real backend puts on its output. The canned
// command and cwd are kept when given; Backend and Sandboxed always say
// mock, so a canned result cannot pretend to come from elsewhere.
func stamp(res backend.ExecResult, l backend.Limits, command []string, cwd string, discard bool) backend.ExecResult {
	if res.Command == nil {
		res.Command = slices.Clone(command)
	}
	if res.Cwd == "" {
		res.Cwd = cwd
	}
	res.Backend, res.Sandboxed = Name, true
	if discard {
		res.Stdout, res.Stderr = "", ""
		return res
	}
	var cut bool
	res.Stdout, cut = bound(res.Stdout, l.MaxOutputBytes)
	res.Truncated = res.Truncated || cut
	res.Stderr, cut = bound(res.Stderr, l.MaxOutputBytes)
	res.Truncated = res.Truncated || cut
	return res
}

// bound passes s through the same bounded buffer a real backend uses.
func bound(s string, limit int) (string, bool) {
	b := backend.NewOutputBuffer(limit)
	_, _ = b.Write([]byte(s))
	return b.String(), b.Truncated()
}

// Which looks the command up in Options.Which.
func (s *Shell) Which(ctx context.Context, command string) (res backend.WhichResult, err error) {
	defer func() { s.record(Call{Kind: CallWhich, Command: command, Err: err}) }()
	if err := s.ws.live(ctx, "which"); err != nil {
		return backend.WhichResult{}, err
	}
	switch {
	case command == "":
		return backend.WhichResult{}, backend.Errorf(backend.ErrInvalid, "which", "", "empty command name: name the command to look up")
	case strings.ContainsAny(command, "\x00\n"):
		return backend.WhichResult{}, backend.Errorf(backend.ErrInvalid, "which", "", "command name %q contains a NUL byte or a newline", command)
	case len(command) > s.ws.limits().MaxCommandBytes:
		return backend.WhichResult{}, backend.Errorf(backend.ErrInvalid, "which", "", "command name is %d bytes, over the limit of %d",
			len(command), s.ws.limits().MaxCommandBytes)
	}
	return backend.WhichResult{Command: command, Path: s.ws.b.opts.Which[command]}, nil
}

// Env returns Options.Env, with the root as cwd and /bin/sh as shell.
func (s *Shell) Env(ctx context.Context) (backend.EnvSnapshot, error) {
	err := s.ws.live(ctx, "env")
	s.record(Call{Kind: CallEnv, Err: err})
	if err != nil {
		return backend.EnvSnapshot{}, err
	}
	return backend.NewEnvSnapshot(s.ws.b.opts.Env, Root, backend.DefaultInterpreter), nil
}

// Info says mock, sandboxed, no network.
func (s *Shell) Info(context.Context) (backend.Info, error) {
	return backend.Info{Backend: Name, Sandboxed: true, NetworkEnabled: false, DefaultTimeout: s.ws.limits().DefaultTimeout}, nil
}

// The clones keep recorded requests and canned results immune to later
// changes by the caller, as the real backends' results are immutable.

func cloneResult(r backend.ExecResult) backend.ExecResult {
	r.Command = slices.Clone(r.Command)
	return r
}

func cloneResponse(r Response) Response {
	r.Result = cloneResult(r.Result)
	return r
}

func cloneExec(r backend.ExecRequest) backend.ExecRequest {
	r.Argv = slices.Clone(r.Argv)
	r.Env = maps.Clone(r.Env)
	return r
}

func cloneScript(r backend.ScriptRequest) backend.ScriptRequest {
	r.Env = maps.Clone(r.Env)
	return r
}

func cloneCalls(cs []Call) []Call {
	out := make([]Call, len(cs))
	for i, c := range cs {
		c.Exec = cloneExec(c.Exec)
		c.Script = cloneScript(c.Script)
		c.Result = cloneResult(c.Result)
		out[i] = c
	}
	return out
}

// Interface guards
var _ backend.Shell = (*Shell)(nil)
