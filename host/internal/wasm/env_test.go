package wasm

import (
	"context"
	"sync"

	"github.com/wai-dev/wai/host/backend"
)

// fakeEnv is an Env whose shell answers with a function of the request
// and records what it was asked. The conformance suite (sdk-tests/abitest)
// covers real backends; these tests are about the runtime.
type fakeEnv struct {
	mu    sync.Mutex
	execs []backend.ExecRequest
	exec  func(ctx context.Context, req backend.ExecRequest) (backend.ExecResult, error)
}

func (e *fakeEnv) Shell() backend.Shell         { return fakeShell{e} }
func (e *fakeEnv) FS() backend.Filesystem       { return nil }
func (e *fakeEnv) Lifecycle() backend.Lifecycle { return nil }
func (e *fakeEnv) Session() string              { return "s1" }

type fakeShell struct{ e *fakeEnv }

func (s fakeShell) Execute(ctx context.Context, req backend.ExecRequest) (backend.ExecResult, error) {
	s.e.mu.Lock()
	s.e.execs = append(s.e.execs, req)
	s.e.mu.Unlock()
	if s.e.exec != nil {
		return s.e.exec(ctx, req)
	}
	return echo(req), nil
}

// echo answers like echo(1) would.
func echo(req backend.ExecRequest) backend.ExecResult {
	out := ""
	if len(req.Argv) > 0 && req.Argv[0] == "echo" {
		for i, a := range req.Argv[1:] {
			if i > 0 {
				out += " "
			}
			out += a
		}
		out += "\n"
	}
	return backend.ExecResult{Stdout: out, Command: req.Argv, Backend: "fake"}
}

func (s fakeShell) ExecuteScript(ctx context.Context, req backend.ScriptRequest) (backend.ExecResult, error) {
	return backend.ExecResult{}, backend.Errorf(backend.ErrUnavailable, "exec.script", "", "fake shell runs no scripts")
}

func (s fakeShell) Which(ctx context.Context, command string) (backend.WhichResult, error) {
	return backend.WhichResult{Command: command}, nil
}

func (s fakeShell) Env(ctx context.Context) (backend.EnvSnapshot, error) {
	return backend.NewEnvSnapshot(nil, "/", "/bin/sh"), nil
}

func (s fakeShell) Info(context.Context) (backend.Info, error) {
	return backend.Info{Backend: "fake"}, nil
}

// Interface guards
var (
	_ Env           = (*fakeEnv)(nil)
	_ backend.Shell = fakeShell{}
)
