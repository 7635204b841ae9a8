package host

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Bounds of the time a containers exec leaves of its call's deadline to
// stop the command and answer: a tenth of what is left, at most 25 s, so
// that the default tool deadline (5m30s) still fits the default exec
// timeout (300 s) after the call's own start-up.
const (
	minExecMargin = 5 * time.Second
	maxExecMargin = 25 * time.Second
)

// fitExecTimeout returns the timeout a command asking for asked runs with
// inside ctx's deadline, and a note for the model when it had to be
// shortened (else ""). A command cut by the call's deadline loses its
// output and tells the model nothing useful; one cut by its own, shorter
// timeout answers what it printed, and the note points to the way to run
// longer work. Without a deadline asked is kept.
func fitExecTimeout(ctx context.Context, asked time.Duration, defaulted bool) (time.Duration, string) {
	dl, ok := ctx.Deadline()
	if !ok {
		return asked, ""
	}
	left := time.Until(dl)
	margin := min(max(left/10, minExecMargin), maxExecMargin)
	fit := max((left - margin).Truncate(time.Second), time.Second)
	if asked <= fit {
		return asked, ""
	}
	what := fmt.Sprintf("timeout %d s", int(asked/time.Second))
	if defaulted {
		what = fmt.Sprintf("the default timeout (%d s)", int(asked/time.Second))
	}
	return fit, fmt.Sprintf("%s does not fit in the %d s left of this tool call's deadline, so the command ran with %d s; "+
		"run longer work with operation exec_background, then exec_poll it",
		what, int(left.Round(time.Second)/time.Second), int(fit/time.Second))
}

// containerExec runs command with a timeout in whole seconds (default
// 300), shortened to fit the call's deadline. Its length and the policies
// were checked before (checkInContainer).
func (s *Session) containerExec(ctx context.Context, c backend.Containers, ref backend.ContainerRef, command, workdir string, timeout int) (backend.ExecResult, error) {
	res, _, err := s.containerExecFit(ctx, c, ref, command, workdir, timeout)
	return res, err
}

// execFit is the timeout an exec ran with, and the note saying why when
// it is shorter than asked.
type execFit struct {
	run  time.Duration
	note string
}

// containerExecFit is containerExec that also says the timeout used.
func (s *Session) containerExecFit(ctx context.Context, c backend.Containers, ref backend.ContainerRef, command, workdir string, timeout int) (backend.ExecResult, execFit, error) {
	if strings.TrimSpace(command) == "" {
		return backend.ExecResult{}, execFit{}, backend.Errorf(backend.ErrInvalid, "containers.exec", ref.Name, "give command: the shell command to run")
	}
	if timeout < 0 {
		return backend.ExecResult{}, execFit{}, backend.Errorf(backend.ErrInvalid, "containers.exec", ref.Name, "timeout is in seconds and must not be negative")
	}
	defaulted := timeout == 0
	if defaulted {
		timeout = 300
	}
	var fit execFit
	fit.run, fit.note = fitExecTimeout(ctx, time.Duration(timeout)*time.Second, defaulted)
	res, err := c.ExecContainer(ctx, ref, backend.ExecRequest{Shell: command, Cwd: workdir, Timeout: fit.run})
	return res, fit, err
}
