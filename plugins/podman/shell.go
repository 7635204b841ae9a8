//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Shell runs commands in a session's container.
type Shell struct{ w *Workspace }

// Execute runs one command: argv directly, or a shell string with
// /bin/sh -c, in cwd under /workspace.
func (s *Shell) Execute(ctx context.Context, req backend.ExecRequest) (backend.ExecResult, error) {
	if err := ctx.Err(); err != nil {
		return backend.ExecResult{}, fmt.Errorf("exec: %w", err)
	}
	timeout, err := s.w.b.limits.CheckExec(req)
	if err != nil {
		return backend.ExecResult{}, err
	}
	if err := checkReserved("exec", req.Env); err != nil {
		return backend.ExecResult{}, err
	}
	cwd, err := s.cwd(ctx, "exec", req.Cwd)
	if err != nil {
		return backend.ExecResult{}, err
	}
	r := execRun{op: "exec", argv: req.Command(), shown: req.Command(), env: req.Env, replace: req.EnvMode == backend.EnvReplace,
		cwd: cwd, timeout: timeout, discard: req.DiscardOutput, output: req.Output}
	if req.Stdin != "" {
		r.stdin = &req.Stdin
	}
	return s.w.run(ctx, r)
}

// ExecuteScript copies the script into the container (a private file under
// /tmp, never in the workspace) and runs it with the interpreter.
func (s *Shell) ExecuteScript(ctx context.Context, req backend.ScriptRequest) (backend.ExecResult, error) {
	const op = "exec.script"
	if err := ctx.Err(); err != nil {
		return backend.ExecResult{}, fmt.Errorf("%s: %w", op, err)
	}
	timeout, err := s.w.b.limits.CheckScript(req)
	if err != nil {
		return backend.ExecResult{}, err
	}
	if err := checkReserved(op, req.Env); err != nil {
		return backend.ExecResult{}, err
	}
	interp := strings.Fields(req.Interpreter)
	if len(interp) == 0 {
		interp = []string{backend.DefaultInterpreter}
	}
	cwd, err := s.cwd(ctx, op, req.Cwd)
	if err != nil {
		return backend.ExecResult{}, err
	}
	script := req.Script
	r := execRun{op: op, argv: interp, shown: append(append([]string{}, interp...), "<script>"), env: req.Env,
		replace: req.EnvMode == backend.EnvReplace, cwd: cwd, stdin: &script, script: true, timeout: timeout, discard: req.DiscardOutput, output: req.Output}
	return s.w.run(ctx, r)
}

// whichScript looks the command up on PATH the way execvp would, without
// running it: command -v would also report functions and builtins.
const whichScript = `case $1 in
*/*) [ -f "$1" ] && [ -x "$1" ] && { printf '%s\n' "$1"; exit 0; }; exit 1;;
esac
IFS=:
for d in $PATH; do
	[ -n "$d" ] || d=.
	if [ -f "$d/$1" ] && [ -x "$d/$1" ]; then printf '%s\n' "$d/$1"; exit 0; fi
done
exit 1`

// Which finds command on the PATH of the container's commands.
func (s *Shell) Which(ctx context.Context, command string) (backend.WhichResult, error) {
	const op = "which"
	res := backend.WhichResult{Command: command}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("%s: %w", op, err)
	}
	if command == "" || len(command) > 1024 {
		return res, backend.Errorf(backend.ErrInvalid, op, "", "give a command name of 1–1024 bytes")
	}
	for i := 0; i < len(command); i++ {
		if c := command[i]; c < 0x20 || c == 0x7f {
			return res, backend.Errorf(backend.ErrInvalid, op, "", "the command name %q contains a control character", command)
		}
	}
	out, err := s.w.run(ctx, execRun{op: op, argv: []string{"/bin/sh", "-c", whichScript, "which", command},
		shown: []string{"which", command}, cwd: ContainerWorkspace, timeout: 30 * time.Second, quiet: true})
	if err != nil {
		return res, err
	}
	if out.TimedOut {
		return res, backend.Errorf(backend.ErrUnavailable, op, command, "the lookup timed out")
	}
	if out.ExitCode == 0 {
		p := strings.TrimSpace(out.Stdout)
		if !strings.HasPrefix(p, "/") {
			p = path.Join(ContainerWorkspace, p)
		}
		res.Path = p
	}
	return res, nil
}

// Env returns the environment commands start with: the image's, the
// config's env, and what podman adds for an exec (HOME, HOSTNAME, …).
func (s *Shell) Env(ctx context.Context) (backend.EnvSnapshot, error) {
	const op = "env"
	if err := ctx.Err(); err != nil {
		return backend.EnvSnapshot{}, fmt.Errorf("%s: %w", op, err)
	}
	out, err := s.w.run(ctx, execRun{op: op, argv: []string{"cat", "/proc/self/environ"}, shown: []string{"env"},
		cwd: ContainerWorkspace, timeout: 30 * time.Second, quiet: true})
	if err != nil {
		return backend.EnvSnapshot{}, err
	}
	if out.ExitCode != 0 || out.Truncated {
		return backend.EnvSnapshot{}, backend.Errorf(backend.ErrUnavailable, op, "", "reading the environment failed: exit %d, %s", out.ExitCode, out.Stderr)
	}
	vars := map[string]string{}
	for _, kv := range strings.Split(out.Stdout, "\x00") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == markerVar {
			continue
		}
		vars[k] = v
	}
	return backend.NewEnvSnapshot(vars, ContainerWorkspace, backend.DefaultInterpreter), nil
}

// Info describes the shell.
func (s *Shell) Info(context.Context) (backend.Info, error) {
	return backend.Info{Backend: "podman", Sandboxed: true, NetworkEnabled: s.w.b.cfg.networkEnabled(),
		DefaultTimeout: s.w.b.limits.DefaultTimeout}, nil
}

// cwd resolves a request's working directory on the host side, where the
// workspace is, confined to it: an escape ("..", a symlink out) or a
// directory that does not exist is ErrInvalid. The container sees the same
// directory under /workspace.
func (s *Shell) cwd(ctx context.Context, op, cwd string) (string, error) {
	if cwd == "" {
		return ContainerWorkspace, nil
	}
	if s.w.volume != "" {
		return s.w.volumeCwd(ctx, op, cwd)
	}
	host, err := s.w.fs.Resolve(cwd)
	if err != nil {
		if errors.Is(err, backend.ErrInvalid) {
			return "", err
		}
		if errors.Is(err, backend.ErrNotFound) {
			return "", backend.Errorf(backend.ErrInvalid, op, cwd, "the working directory does not exist in the workspace")
		}
		return "", err
	}
	rel := strings.TrimPrefix(host, s.w.fs.Root())
	return ContainerWorkspace + rel, nil
}

// checkReserved refuses the variable that marks a command's processes:
// overriding it would hide them from the timeout.
func checkReserved(op string, env map[string]string) error {
	if _, ok := env[markerVar]; ok {
		return backend.Errorf(backend.ErrInvalid, op, "", "environment variable %s is reserved by wai (it marks a command's processes)", markerVar)
	}
	return nil
}

// Interface guards
var _ backend.Shell = (*Shell)(nil)
