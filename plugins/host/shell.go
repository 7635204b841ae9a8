//go:build linux && (amd64 || arm64)

package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Shell runs commands as subprocesses in the workspace root.
type Shell struct{ w *Workspace }

// Interface guards
var (
	_ backend.Shell = (*Shell)(nil)
)

// Info describes the host shell: not sandboxed, with the host's network.
func (s *Shell) Info(context.Context) (backend.Info, error) {
	return backend.Info{Backend: "host", Sandboxed: false, NetworkEnabled: true, DefaultTimeout: s.w.b.limits.DefaultTimeout}, nil
}

// Execute runs argv directly, or a shell string with `shell -c`.
func (s *Shell) Execute(ctx context.Context, req backend.ExecRequest) (backend.ExecResult, error) {
	const op = "exec"
	timeout, err := s.w.b.limits.CheckExec(req)
	if err != nil {
		return backend.ExecResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return backend.ExecResult{}, fmt.Errorf("%s: %w", op, err)
	}
	argv := req.Argv
	if req.Shell != "" {
		argv = []string{s.w.b.cfg.Shell, "-c", req.Shell}
	}
	return s.run(ctx, op, command{
		argv: argv, cwd: req.Cwd, env: req.Env, mode: req.EnvMode, stdin: req.Stdin,
		timeout: timeout, discard: req.DiscardOutput, output: req.Output,
	})
}

// ExecuteScript writes the script to a file in a private temporary
// directory of the host, outside the workspace, and runs the interpreter on
// it. Outside, because the file is an implementation detail: it must not
// show up in a listing, be caught by a glob, or collide with the agent's
// own files; and a script that cleans its working directory cannot delete
// itself mid-run. The directory is removed when the command ends.
func (s *Shell) ExecuteScript(ctx context.Context, req backend.ScriptRequest) (backend.ExecResult, error) {
	const op = "exec.script"
	timeout, err := s.w.b.limits.CheckScript(req)
	if err != nil {
		return backend.ExecResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return backend.ExecResult{}, fmt.Errorf("%s: %w", op, err)
	}
	interp := req.Interpreter
	if interp == "" {
		interp = backend.DefaultInterpreter
	}
	// "python3 -u" or "/usr/bin/env bash" work as a shebang line would.
	argv := strings.Fields(interp)
	if len(argv) == 0 {
		return backend.ExecResult{}, backend.Errorf(backend.ErrInvalid, op, "", "the interpreter %q is blank: name a program, or leave it empty for %s", req.Interpreter, backend.DefaultInterpreter)
	}
	dir, err := os.MkdirTemp("", "wai-script-")
	if err != nil {
		return backend.ExecResult{}, backend.Errorf(backend.ErrUnavailable, op, "", "cannot create a temporary directory for the script: %v", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "script")
	if err := os.WriteFile(file, []byte(req.Script), 0o600); err != nil {
		return backend.ExecResult{}, backend.Errorf(backend.ErrUnavailable, op, "", "cannot write the script: %v", err)
	}
	return s.run(ctx, op, command{
		argv: append(argv, file), cwd: req.Cwd, env: req.Env, mode: req.EnvMode,
		timeout: timeout, discard: req.DiscardOutput, output: req.Output,
	})
}

// Which looks command up on the PATH of the workspace's environment, as a
// command run there would find it. Nothing is run.
func (s *Shell) Which(ctx context.Context, name string) (backend.WhichResult, error) {
	const op = "which"
	if err := ctx.Err(); err != nil {
		return backend.WhichResult{}, fmt.Errorf("%s: %w", op, err)
	}
	if name == "" || strings.ContainsAny(name, "\x00\n") {
		return backend.WhichResult{}, backend.Errorf(backend.ErrInvalid, op, name, "give a command name without NUL or newline")
	}
	path, err := lookPath(name, s.w.env["PATH"], s.w.root)
	if err != nil {
		return backend.WhichResult{Command: name}, nil
	}
	return backend.WhichResult{Command: name, Path: path}, nil
}

// Env returns the environment commands start with, the root as their
// default directory, and the shell that runs shell strings.
func (s *Shell) Env(ctx context.Context) (backend.EnvSnapshot, error) {
	if err := ctx.Err(); err != nil {
		return backend.EnvSnapshot{}, fmt.Errorf("env: %w", err)
	}
	return backend.NewEnvSnapshot(s.w.env, s.w.root, s.w.b.cfg.Shell), nil
}

// environ builds a command's environment from the base and the request.
func (s *Shell) environ(extra map[string]string, mode backend.EnvMode) []string {
	vars := s.w.env
	if mode == backend.EnvReplace {
		vars = map[string]string{}
		if p, ok := s.w.env["PATH"]; ok {
			vars["PATH"] = p
		}
	}
	out := make([]string, 0, len(vars)+len(extra))
	for k, v := range vars {
		if _, over := extra[k]; !over {
			out = append(out, k+"="+v)
		}
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}

// errNotExecutable: the file exists but cannot be run.
var errNotExecutable = errors.New("permission denied")

// lookPath finds name the way a shell would: a name with a slash is a path
// (relative to dir), anything else is searched on pathList, whose relative
// entries are relative to dir.
func lookPath(name, pathList, dir string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return p, executable(p)
	}
	var denied error
	for _, d := range filepath.SplitList(pathList) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, name)
		err := executable(p)
		if err == nil {
			return p, nil
		}
		if errors.Is(err, errNotExecutable) && denied == nil {
			denied = err
		}
	}
	if denied != nil {
		return "", denied
	}
	return "", os.ErrNotExist
}

func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return os.ErrNotExist
	case fi.IsDir() || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0:
		return errNotExecutable
	}
	return nil
}

// notRun is the result of a command that could not be started: 127 when
// it does not exist, 126 when it cannot be executed, as a shell reports.
func notRun(cmd command, cwd string, err error, start time.Time) backend.ExecResult {
	code, msg := 127, "command not found"
	if !errors.Is(err, os.ErrNotExist) {
		code, msg = 126, "cannot execute: "+err.Error()
	}
	return backend.ExecResult{
		ExitCode: code, Stderr: fmt.Sprintf("wai: %s: %s\n", cmd.argv[0], msg),
		Command: cmd.argv, Cwd: cwd, Duration: time.Since(start), Backend: "host",
	}
}
