//go:build linux && (amd64 || arm64)

package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/wai-dev/wai/host/backend"
)

// command is a request reduced to what running it needs.
type command struct {
	argv    []string
	cwd     string
	env     map[string]string
	mode    backend.EnvMode
	stdin   string
	timeout time.Duration
	discard bool
	output  backend.OutputFunc // live output, nil for none
}

// run starts cmd in its own process group and waits for it, killing the
// group at the timeout, on cancellation, and as soon as the command itself
// exits.
func (s *Shell) run(ctx context.Context, op string, cmd command) (backend.ExecResult, error) {
	w := s.w
	done, err := w.begin(op)
	if err != nil {
		return backend.ExecResult{}, err
	}
	defer done()
	start := time.Now()
	dir, err := w.fs.Resolve(cmd.cwd)
	if err != nil {
		return backend.ExecResult{}, cwdError(op, cmd.cwd, err)
	}
	env, marker := s.markedEnv(cmd)
	path, err := lookPath(cmd.argv[0], pathOf(env), dir)
	if err != nil {
		return notRun(cmd, dir, err, start), nil
	}
	c := s.newCmd(path, dir, env, cmd)
	var out output
	if res, ok, err := s.launch(op, c, &out, cmd, dir, start); !ok {
		return res, err
	}
	// The leader is not reaped before the kills are done (see await), so
	// its start time stays readable; 0 (scan everything) if it is not.
	leaderStart, _ := startTime(c.Process.Pid)

	stop := s.await(ctx, c.Process.Pid, cmd.timeout, marker, leaderStart)
	if stop.escaped > 0 {
		w.b.log.Debug("host.exec.escaped_killed", "command", cmd.argv[0], "session", w.session, "processes", stop.escaped,
			"detail", "processes that had left the command's process group were found by its marker and killed")
	}
	_ = c.Wait() // reaps; the status is read from ProcessState in collect
	res := s.collect(c, &out, cmd, dir, start)
	return classify(ctx, op, cmd, res, stop)
}

// markedEnv is the command's environment and the marker entry that lets
// sweep find its processes. The marker comes last: it wins over a
// WAI_EXEC in the request or the inherited environment. EnvReplace
// promises PATH and the request's variables only, so there the group kill
// is all (as on podman, where such a command runs under env -i).
func (s *Shell) markedEnv(cmd command) (env []string, marker string) {
	env = s.environ(cmd.env, cmd.mode)
	marker = markerVar + "=" + newSecret()
	if cmd.mode != backend.EnvReplace {
		env = append(env, marker)
	}
	return env, marker
}

// newCmd is the process to start: the leader of a group of its own, so
// that await can kill all it spawns.
func (s *Shell) newCmd(path, dir string, env []string, cmd command) *exec.Cmd {
	c := &exec.Cmd{
		Path: path, Args: cmd.argv, Dir: dir, Env: env,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
		// Bounds the wait for exec's own stdin-copying goroutine, which a
		// grandchild holding stdin open could otherwise block.
		WaitDelay: time.Duration(s.w.b.cfg.KillGrace),
	}
	if cmd.stdin != "" {
		c.Stdin = strings.NewReader(cmd.stdin)
	}
	return c
}

// launch wires c's output into out and starts it. When it reports false
// the command did not start: the result and error are run's answer (a
// not-run result when the failure is the command's, an error when it is
// the machine's or the workspace's).
func (s *Shell) launch(op string, c *exec.Cmd, out *output, cmd command, dir string, start time.Time) (backend.ExecResult, bool, error) {
	if !cmd.discard { // nil Stdout/Stderr means /dev/null: nothing to copy
		if err := out.start(c, s.w.b.limits.MaxOutputBytes, cmd.output); err != nil {
			return backend.ExecResult{}, false, backend.Errorf(backend.ErrUnavailable, op, "", "cannot create output pipes: %v", err)
		}
	}
	if err := c.Start(); err != nil {
		out.abort()
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.EMFILE) {
			return backend.ExecResult{}, false, backend.Errorf(backend.ErrUnavailable, op, "", "cannot start a process: %v", err)
		}
		if _, serr := os.Stat(dir); serr != nil {
			return backend.ExecResult{}, false, backend.Errorf(backend.ErrUnavailable, op, cmd.cwd,
				"the working directory %s is gone (did a command remove it?): recreate it, or close and reopen the session", dir)
		}
		return notRun(cmd, dir, unwrapPathError(err), start), false, nil
	}
	out.started()
	return backend.ExecResult{}, true, nil
}

// collect is the result of the reaped command c: its output, once drained,
// and how it exited.
func (s *Shell) collect(c *exec.Cmd, out *output, cmd command, dir string, start time.Time) backend.ExecResult {
	w := s.w
	res := backend.ExecResult{Command: cmd.argv, Cwd: dir, Duration: time.Since(start), Backend: "host"}
	if !out.drain(time.Duration(w.b.cfg.KillGrace)) {
		w.b.log.Warn("host.exec.output_held",
			"command", cmd.argv[0], "session", w.session,
			"detail", "a process that left the command's process group still holds its output; stopped reading")
	}
	if !cmd.discard {
		res.Stdout, res.Stderr = out.stdout.String(), out.stderr.String()
		res.Truncated = out.stdout.Truncated() || out.stderr.Truncated()
	}
	var status syscall.WaitStatus
	if c.ProcessState != nil {
		status, _ = c.ProcessState.Sys().(syscall.WaitStatus)
	}
	switch {
	case status.Signaled():
		res.Signal = int(status.Signal())
		res.ExitCode = 128 + res.Signal
	default:
		res.ExitCode = status.ExitStatus()
	}
	return res
}

// classify completes res with why the command stopped: a timeout is a
// result, a cancellation or a closed workspace an error beside it.
func classify(ctx context.Context, op string, cmd command, res backend.ExecResult, stop stopped) (backend.ExecResult, error) {
	switch stop.why {
	case stopTimeout:
		res.TimedOut, res.ExitCode = true, backend.TimeoutExitCode
		if res.Signal == 0 { // it caught our signal and exited by itself
			res.Signal = int(stop.sent)
		}
	case stopCancel, stopClosed:
		if res.Signal == 0 {
			res.Signal = int(stop.sent)
		}
		if stop.why == stopClosed {
			return res, backend.Errorf(backend.ErrUnavailable, op, cmd.argv[0], "the workspace was closed while the command ran; it was stopped")
		}
		return res, fmt.Errorf("%s: %s stopped: %w", op, cmd.argv[0], ctx.Err())
	}
	return res, nil
}

type stopReason int

const (
	stopExited  stopReason = iota // the command ended by itself
	stopTimeout                   // its timeout, or the caller's deadline, passed
	stopCancel                    // the caller cancelled
	stopClosed                    // the workspace closed
)

type stopped struct {
	why     stopReason
	sent    syscall.Signal // the last signal sent to the group, 0 if none
	escaped int            // processes outside the group found by the marker and killed
}

// await waits until the process pid, leader of its own group, exits; on
// timeout or cancellation it sends the group SIGTERM and, after the grace
// period, SIGKILL. Once the leader has exited it kills what is left of the
// group, then what left the group but carries the command's marker entry
// (see sweep). The leader is not reaped here (only waited for with
// WNOWAIT): as long as it is a zombie its pid, which is the group id,
// cannot be reused, so the kills cannot hit an unrelated group.
func (s *Shell) await(ctx context.Context, pid int, timeout time.Duration, marker string, leaderStart uint64) stopped {
	exited := make(chan struct{})
	go func() { waitExited(pid); close(exited) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var st stopped
	select {
	case <-exited:
	case <-timer.C:
		st.why = stopTimeout
	case <-ctx.Done():
		// A deadline on the context is a timeout too, only set by the
		// caller: it ends in a timed-out result, not an error.
		st.why = stopCancel
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			st.why = stopTimeout
		}
	case <-s.w.ctx.Done():
		st.why = stopClosed
	}
	if st.why != stopExited {
		st.sent = syscall.SIGTERM
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		sweep(marker, pid, leaderStart, syscall.SIGTERM) // those that left the group
		grace := time.NewTimer(time.Duration(s.w.b.cfg.KillGrace))
		select {
		case <-exited:
		case <-grace.C:
			st.sent = syscall.SIGKILL
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-exited
		}
		grace.Stop()
	}
	// Background children, and members that ignored SIGTERM when the
	// leader did not: nothing of the command outlives the call.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	st.escaped = sweep(marker, pid, leaderStart, syscall.SIGKILL)
	return st
}

// waitExited blocks until pid has exited, leaving it to be reaped.
func waitExited(pid int) {
	const pPID, wExited, wNoWait = 1, 4, 0x01000000
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), wExited|wNoWait, 0, 0)
		if errno != syscall.EINTR {
			return // exited, or ECHILD: nothing left to wait for
		}
	}
}

func pathOf(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			return v
		}
	}
	return ""
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// cwdError rewords a failed cwd resolution as the invalid request it is.
func cwdError(op, cwd string, err error) error {
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind == backend.ErrUnavailable {
		return err
	}
	msg := be.Msg
	if be.Kind == backend.ErrNotFound {
		msg = "no such directory in the workspace"
	}
	return backend.Errorf(backend.ErrInvalid, op, cwd, "bad cwd: %s", msg)
}
