package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

func init() {
	register(&command{
		name:    "exec",
		args:    "[flags] [--] CMD [ARGS…]  |  wai exec [flags] -c 'shell string'",
		summary: "run one command in a sandboxed session, through limits and policies",
		text: `
Runs CMD with ARGS directly (no shell), or a shell string with /bin/sh -c,
in a session's workspace on the configured backend. Every limit and policy
applies. The command's stdout and stderr go to wai's as it writes them
(all of it: limits.max_output_bytes caps only what a result keeps for a
model), and wai exits with the command's status, so a script can tell
wai's failures from the command's own:
  0-123  the command's own exit status
  124    the command timed out (its whole process tree is killed)
  125    wai itself failed: a bad flag, the configuration, a refused
         request (policy or limit), a backend that is unavailable
  126    the command exists but cannot be executed
  127    the command was not found
  128+N  signal N ended the command (130: wai was interrupted)
As with podman run and docker run, a command that exits 124-127 by itself
is indistinguishable from these; wai's own failures always print "wai:" on
stderr.

Without --session the session is a throwaway: its workspace (and container)
is removed when the command ends. With --session NAME the workspace is kept
for the next command of the same session.

On a terminal, a status line on stderr names slow steps (pulling an image,
starting a container) and a command running past 2 s; it is erased before
any output. It never appears when stderr is not a terminal; -q (or
WAI_PROGRESS=0) turns it off.

Put flags before the command; use -- when the command starts with a dash.`,
		flags:       execFlags,
		usageStatus: exitExecFailed,
	})
}

// envFlag collects repeated --env K=V.
type envFlag map[string]string

func (e envFlag) String() string {
	kv := make([]string, 0, len(e))
	for k, v := range e {
		kv = append(kv, k+"="+v)
	}
	return strings.Join(kv, " ")
}

func (e envFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	e[k] = v
	return nil
}

// exitExecFailed is `wai exec`'s status when wai could not run the command
// at all. Not exitError (2): ls, grep and many others exit 2 themselves. 125
// is what podman run and docker run use for their own failures.
const exitExecFailed = 125

func execFlags(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
	var (
		kf      kernelFlags
		session string
		shell   string
		cwd     string
		timeout time.Duration
		stdin   bool
		quiet   bool
		env     = envFlag{}
	)
	kf.register(fs)
	fs.StringVar(&session, "session", "", "keep the workspace under this session `name` for later commands (default: a throwaway session)")
	fs.StringVar(&shell, "c", "", "run this shell `string` with /bin/sh -c instead of CMD ARGS")
	fs.StringVar(&cwd, "cwd", "", "working `dir`ectory, relative to the workspace root (default the root)")
	fs.DurationVar(&timeout, "timeout", 0, "kill the command and everything it started after this `duration` (default: the config's default_timeout)")
	fs.BoolVar(&stdin, "stdin", false, "pass wai's standard input to the command (bounded by limits.max_stdin_bytes)")
	fs.Var(env, "env", "set an environment variable `NAME=VALUE` for the command (repeatable)")
	fs.BoolVar(&quiet, "q", false, "no progress line on stderr (it shows only on a terminal; WAI_PROGRESS=0 turns it off too)")

	return func(ctx context.Context, std stdio, args []string) int {
		req := backend.ExecRequest{Cwd: cwd, Timeout: timeout}
		switch {
		case shell != "" && len(args) > 0:
			fmt.Fprintf(std.err, "wai exec: give a command or -c 'shell string', not both (got -c and %q)\n", args[0])
			fs.Usage()
			return exitExecFailed
		case shell != "":
			req.Shell = shell
		case len(args) > 0:
			req.Argv = args
		default:
			fmt.Fprintf(std.err, "wai exec: no command: give CMD [ARGS…] or -c 'shell string'\n")
			fs.Usage()
			return exitExecFailed
		}
		if len(env) > 0 {
			req.Env = env
		}

		// Logs of -v go through the status line, which steps aside for them.
		st := newStatus(std.err, quiet, std.getenv)
		k, err := kf.open(ctx, std, st, false)
		if err != nil {
			return failExec(ctx, std.err, err)
		}
		defer closeKernel(k, std.err)

		if stdin {
			in, err := readBounded(std.in, k.Config().Limits.MaxStdinBytes)
			if err != nil {
				return failExec(ctx, std.err, err)
			}
			req.Stdin = in
		}
		return execute(ctx, k, session, req, std, st)
	}
}

func execute(ctx context.Context, k *host.Kernel, session string, req backend.ExecRequest, std stdio, st *status) int {
	label := req.Shell
	if label == "" {
		label = strings.Join(req.Argv, " ")
	}
	// The line is gone before anything else reaches stderr: on every
	// return path, and before the command's output below.
	defer st.end()
	pctx := st.begin(ctx, label)
	// A named session is kept for the next command; a throwaway one (the
	// kernel names it) is removed when the kernel closes.
	s, err := k.Session(pctx, session, host.SessionOptions{Keep: session != ""})
	if err != nil {
		st.end()
		return failExec(ctx, std.err, err)
	}
	live := &liveWriter{std: std, st: st}
	req.Output = live.write
	res, err := s.Shell().Execute(pctx, req)
	st.end()
	if err != nil {
		return failExec(ctx, std.err, err)
	}
	// Output is printed as the command writes it, each stream to its own,
	// so pipes and redirections behave as for the command itself. A backend
	// that streamed nothing hands it all over in the result.
	if !live.streamed {
		_, _ = std.out.Write([]byte(res.Stdout))
		_, _ = std.err.Write([]byte(res.Stderr))
	}
	if ctx.Err() != nil {
		fmt.Fprintf(std.err, "wai: interrupted; the command was stopped\n")
		return exitInterrupted
	}
	if res.TimedOut {
		limit := req.Timeout
		if limit == 0 {
			limit = k.Config().Limits.DefaultTimeout
		}
		how := "killed"
		if res.Signal > 0 {
			how = "killed by " + signalName(res.Signal)
		}
		if res.Sandboxed {
			fmt.Fprintf(std.err, "wai: timed out after %s: the command and every process it started were %s\n", limit, how)
		} else {
			// Unsandboxed, a process can leave the command's process group
			// (setsid) and outlive the kill: say what was killed.
			fmt.Fprintf(std.err, "wai: timed out after %s: the command and every process in its process group were %s (a process that left the group with setsid is not; the podman backend stops those too)\n", limit, how)
		}
		return backend.TimeoutExitCode
	}
	return exitStatus(res)
}

// liveWriter prints a command's output as it comes. The backend calls
// write one chunk at a time and never after Execute returns, so streamed
// needs no lock.
type liveWriter struct {
	std      stdio
	st       *status
	streamed bool
}

func (l *liveWriter) write(stream backend.Stream, p []byte) {
	if !l.streamed {
		// The status line steps aside for good: once the command speaks,
		// its output tells what it is doing.
		l.st.end()
		l.streamed = true
	}
	if stream == backend.Stderr {
		_, _ = l.std.err.Write(p)
		return
	}
	_, _ = l.std.out.Write(p)
}

// failExec reports err like fail, with exec's status for its own failures
// (an interrupt keeps its own status).
func failExec(ctx context.Context, stderr io.Writer, err error) int {
	if code := fail(ctx, stderr, err); code != exitError {
		return code
	}
	return exitExecFailed
}

// exitStatus maps a result to a process exit status the way a shell does:
// the command's own status, or 128+N when signal N ended it.
func exitStatus(res backend.ExecResult) int {
	switch {
	case res.ExitCode >= 0 && res.ExitCode <= 255:
		return res.ExitCode
	case res.Signal > 0:
		return 128 + res.Signal
	}
	return 1
}

func signalName(sig int) string {
	if name := syscall.Signal(sig).String(); name != "" && !strings.HasPrefix(name, "signal ") {
		return fmt.Sprintf("signal %d (%s)", sig, name)
	}
	return fmt.Sprintf("signal %d", sig)
}

// readBounded reads r whole, refusing more than max bytes rather than
// holding an unbounded input in memory.
func readBounded(r io.Reader, limit int) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return "", backend.Errorf(backend.ErrInvalid, "exec", "", "reading standard input: %v", err)
	}
	if len(b) > limit {
		return "", backend.Errorf(backend.ErrInvalid, "exec", "", "standard input is over the limit of %d bytes (limits.max_stdin_bytes)", limit)
	}
	return string(b), nil
}

// Interface guards
var _ flag.Value = envFlag(nil)
