package host

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// guardedShell is a session's Shell: limits, then policies, then the
// workspace, then an event.
type guardedShell struct{ s *Session }

func (g *guardedShell) Execute(ctx context.Context, req backend.ExecRequest) (backend.ExecResult, error) {
	if req.Output == nil {
		req.Output = liveOutput(ctx) // a tool call's front end (WithLiveOutput)
	}
	shown := req.Shell
	if shown == "" {
		shown = joinArgv(req.Argv)
	}
	var soft *softPlan
	req.Timeout, soft = g.s.softTimeout(ctx, req.Timeout, shown)
	limits := func() error { _, err := g.s.k.cfg.Limits.CheckExec(req); return err }
	check := CheckRequest{Action: ActionShellExec, Command: req.Command(), Shell: req.Shell, Cwd: req.Cwd, EnvKeys: envKeys(req.Env)}
	return g.run(ctx, limits, check, "exec", req.Command(), func(sh backend.Shell) (backend.ExecResult, error) {
		rctx, finish := soft.start(ctx)
		defer finish()
		return sh.Execute(rctx, req)
	})
}

func (g *guardedShell) ExecuteScript(ctx context.Context, req backend.ScriptRequest) (backend.ExecResult, error) {
	interp := req.Interpreter
	if interp == "" {
		interp = backend.DefaultInterpreter
	}
	if req.Output == nil {
		req.Output = liveOutput(ctx)
	}
	var soft *softPlan
	req.Timeout, soft = g.s.softTimeout(ctx, req.Timeout, "a "+interp+" script")
	limits := func() error { _, err := g.s.k.cfg.Limits.CheckScript(req); return err }
	check := CheckRequest{Action: ActionShellScript, Command: []string{interp}, Script: req.Script, Cwd: req.Cwd, EnvKeys: envKeys(req.Env)}
	return g.run(ctx, limits, check, "script", []string{interp, "<script>"}, func(sh backend.Shell) (backend.ExecResult, error) {
		rctx, finish := soft.start(ctx)
		defer finish()
		return sh.ExecuteScript(rctx, req)
	})
}

// run is the one path every command takes: limits (nothing runs over
// them), then the policy chain, then the workspace, then an event. A
// result from the unsandboxed fallback never claims a sandbox.
func (g *guardedShell) run(ctx context.Context, limits func() error, check CheckRequest, kind string, display []string,
	call func(backend.Shell) (backend.ExecResult, error)) (backend.ExecResult, error) {
	s := g.s
	done, err := s.begin()
	if err != nil {
		return backend.ExecResult{}, err
	}
	defer done()
	if err := limits(); err != nil {
		return backend.ExecResult{}, err
	}
	if err := s.check(ctx, check); err != nil {
		return backend.ExecResult{}, err
	}
	ws, fellBack, err := s.workspace(ctx)
	if err != nil {
		return backend.ExecResult{}, err
	}
	start := time.Now()
	res, err := call(ws.Shell())
	if fellBack {
		res.Sandboxed = false
	}
	g.event(ctx, kind, display, res, err, time.Since(start), fellBack)
	return res, err
}

func (g *guardedShell) Which(ctx context.Context, command string) (backend.WhichResult, error) {
	s := g.s
	done, err := s.begin()
	if err != nil {
		return backend.WhichResult{}, err
	}
	defer done()
	switch {
	case command == "":
		return backend.WhichResult{}, backend.Errorf(backend.ErrInvalid, "which", "", "empty command name")
	case len(command) > s.k.cfg.Limits.MaxCommandBytes:
		return backend.WhichResult{}, backend.Errorf(backend.ErrInvalid, "which", "", "command name is %d bytes, over the limit of %d", len(command), s.k.cfg.Limits.MaxCommandBytes)
	case strings.IndexByte(command, 0) >= 0:
		return backend.WhichResult{}, backend.Errorf(backend.ErrInvalid, "which", "", "command name contains a NUL byte")
	}
	ws, _, err := s.workspace(ctx)
	if err != nil {
		return backend.WhichResult{}, err
	}
	return ws.Shell().Which(ctx, command)
}

func (g *guardedShell) Env(ctx context.Context) (backend.EnvSnapshot, error) {
	s := g.s
	done, err := s.begin()
	if err != nil {
		return backend.EnvSnapshot{}, err
	}
	defer done()
	ws, _, err := s.workspace(ctx)
	if err != nil {
		return backend.EnvSnapshot{}, err
	}
	return ws.Shell().Env(ctx)
}

// Info opens the workspace if needed, since only the backend knows what it
// is, under the caller's context. A workspace that cannot be opened is an
// error, not a claim either way.
func (g *guardedShell) Info(ctx context.Context) (backend.Info, error) {
	ws, fellBack, err := g.s.workspace(ctx)
	if err != nil {
		return backend.Info{}, err
	}
	info, err := ws.Shell().Info(ctx)
	if err != nil {
		return backend.Info{}, err
	}
	if fellBack {
		info.Sandboxed = false
	}
	return info, nil
}

func (g *guardedShell) event(ctx context.Context, kind string, command []string, res backend.ExecResult, err error, dur time.Duration, fellBack bool) {
	g.s.useEvent(ctx, "shell.exec", err, func() []slog.Attr {
		attrs := []slog.Attr{
			slog.String("kind", kind),
			slog.String("command", joinArgv(command)), slog.Int("exit", res.ExitCode),
			slog.Duration("duration", dur), slog.Bool("truncated", res.Truncated),
			slog.Bool("timed_out", res.TimedOut), slog.String("backend", res.Backend),
			slog.Bool("sandboxed", res.Sandboxed),
		}
		if fellBack {
			attrs = append(attrs, slog.Bool("fallback", true))
		}
		return attrs
	})
}

func envKeys(env map[string]string) []string {
	return slices.Sorted(maps.Keys(env)) // nil for none
}

// joinArgv renders argv for humans; it is not meant to be re-parsed.
func joinArgv(argv []string) string {
	return strings.Join(argv, " ")
}

// callKey carries the tool a capability call is made for, so policies and
// events can name it.
type callKey struct{}

type callInfo struct {
	tool   string
	callID string
}

func withCall(ctx context.Context, tool, callID string) context.Context {
	return context.WithValue(ctx, callKey{}, callInfo{tool: tool, callID: callID})
}

func callTool(ctx context.Context) string {
	ci, _ := ctx.Value(callKey{}).(callInfo)
	return ci.tool
}

// checkRequest fills in who is asking.
func (s *Session) checkRequest(ctx context.Context, req CheckRequest) CheckRequest {
	req.Session = s.spec.Session
	req.Tool = callTool(ctx)
	return req
}

// check passes req through the policy chain; a policy that asks is put to
// the session's Approver.
func (s *Session) check(ctx context.Context, req CheckRequest) error {
	return s.k.chain.check(ctx, s.checkRequest(ctx, req), s.askPerson)
}

// Interface guards
var _ backend.Shell = (*guardedShell)(nil)
