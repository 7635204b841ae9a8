//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
)

// Host-side bounds on top of what the agent enforces. The agent kills a
// command at its timeout; the host's own deadline comes agentDeadlineSlack
// later, and a cancelled command gets the grace period plus
// agentCancelWait to be reported ended. Past either, the agent counts as
// wedged: the command is killed from outside and the agent replaced.
const (
	agentDeadlineSlack = 5 * time.Second
	agentCancelWait    = 5 * time.Second
)

// agentExec is the Exec message of run r.
func (w *Workspace) agentExec(st *ctrState, r execRun, secret string) agentproto.Exec {
	e := agentproto.Exec{Argv: r.argv, Env: r.env, Marker: markerVar + "=" + secret, Cwd: r.cwd,
		TimeoutMS: max(r.timeout.Milliseconds(), 1), GraceMS: w.b.grace().Milliseconds(), Discard: r.discard,
		KeepBackground: w.keepBackground() || r.quiet}
	if r.replace {
		e.EnvMode, e.Path = agentproto.EnvReplace, st.path()
	}
	switch {
	case r.script && r.stdin != nil:
		e.Script = []byte(*r.stdin)
	case r.stdin != nil:
		e.Stdin = []byte(*r.stdin)
	}
	return e
}

// runAgent runs r through the agent conn. ok is false when the command
// could not be handed to the agent (its connection broke first): nothing
// ran, and the caller takes the Podman exec path.
func (w *Workspace) runAgent(ctx context.Context, st *ctrState, conn *agentConn, r execRun, start time.Time) (res backend.ExecResult, ok bool, err error) {
	res = backend.ExecResult{Command: r.shown, Cwd: r.cwd, Backend: "podman", Sandboxed: true}
	id, secret := newID(), newSecret()
	sink := newOutputSink(w.b.limits.MaxOutputBytes, r.discard, r.output)
	call, err := conn.exec(w.agentExec(st, r, secret), sink)
	if err != nil {
		if !errors.Is(err, errExecTooLarge) {
			go w.dropAgent(st, conn, err.Error())
		}
		return res, false, nil
	}
	why := w.awaitAgent(ctx, conn, call, r.timeout)
	ended, exit, callErr := call.outcome()
	if errors.Is(callErr, errAgentDead) && call.root() == (execRoot{}) && !w.b.containerRunning(ctx, st.id) {
		// The connection ended before the command said it started, and
		// the container is gone (stopped from outside, most likely before
		// the command was sent): nothing of it runs, and the exec path
		// recreates the container.
		w.markDead(st, "its container stopped (its agent's connection ended)")
		go w.dropAgent(st, conn, "its container stopped")
		sink.stop()
		return res, false, nil
	}
	var kill killReport
	if !ended || callErr != nil || strings.HasPrefix(exit.Killed, "left") {
		// The agent did not stop the command, or cannot be asked: the kill
		// from outside finds its processes by their marker. A wedged agent
		// goes first: one that is merely slow may still start the command
		// (its Exec waiting in the pipe) once a kill from outside has found
		// nothing, and it would then run on with nobody to stop it.
		if !ended || errors.Is(callErr, errAgentDead) {
			w.dropAgent(st, conn, "a command outlived its agent's deadline, or the agent died under it")
		}
		kill = w.killTree(st, id, secret, call.root(), w.b.grace(), -1)
	}
	sink.stop()
	if herr := st.wait(context.WithoutCancel(ctx)); herr != nil {
		return res, true, herr
	}
	res.Duration = time.Since(start)
	sink.result(&res)
	res.Stderr += kill.note
	switch {
	case callErr != nil && !errors.Is(callErr, errAgentDead):
		return res, true, callErr // the agent could not start it
	case why == stopExited && (!ended || callErr != nil):
		w.log(r, res, ctx)
		return res, true, backend.Errorf(backend.ErrUnavailable, r.op, r.shown[0],
			"the in-container agent stopped answering while the command ran (%v); the command was stopped", callErr)
	}
	code := exit.Code
	if !ended {
		code = -1
	}
	if exit.TimedOut {
		why = stopTimeout
	}
	sig := kill.signal
	if sig == 0 {
		sig = exit.Signal
	}
	return res, true, w.classify(ctx, st, r, &res, why, code, sig)
}

// awaitAgent waits for call's end, its deadline, the caller or the
// workspace closing; in the last three cases it asks the agent to stop
// the command and waits a bounded time for that.
func (w *Workspace) awaitAgent(ctx context.Context, conn *agentConn, call *agentCall, timeout time.Duration) stopReason {
	deadline := time.NewTimer(timeout + w.b.slackOr(agentDeadlineSlack))
	defer deadline.Stop()
	why := stopExited
	select {
	case <-call.done:
		return stopExited
	case <-deadline.C:
		why = stopTimeout
	case <-ctx.Done():
		why = stopCancel
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = stopTimeout
		}
	case <-w.closing:
		why = stopClosed
	}
	conn.cancel(call, w.b.grace())
	wait := time.NewTimer(w.b.grace() + w.b.slackOr(agentCancelWait))
	defer wait.Stop()
	select {
	case <-call.done:
	case <-wait.C:
	case <-conn.dead:
	}
	return why
}

// outcome says whether the call ended, how, and whether it failed.
func (c *agentCall) outcome() (ended bool, e agentproto.Exit, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended, c.exit, c.err
}
