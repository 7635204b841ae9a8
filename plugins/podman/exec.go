//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/containers/podman/v5/pkg/api/handlers"
	"github.com/containers/podman/v5/pkg/bindings/containers"
	dockerContainer "github.com/docker/docker/api/types/container"

	"github.com/wai-dev/wai/host/backend"
)

// execRun is one command as the shell hands it to run.
type execRun struct {
	op      string   // "exec", "exec.script", …: errors and events name it
	argv    []string // the command, before wrapping
	shown   []string // ExecResult.Command
	env     map[string]string
	replace bool    // EnvReplace
	cwd     string  // container path
	stdin   *string // nil: no stdin (EOF at once)
	script  bool    // stdin is a script for scriptWrapScript
	timeout time.Duration
	discard bool
	output  backend.OutputFunc // live output; nil for none
	quiet   bool               // no shell.exec event (internal probes)
}

type stopReason int

const (
	stopExited  stopReason = iota // the command ended by itself
	stopTimeout                   // its timeout, or the caller's deadline, passed
	stopCancel                    // the caller cancelled
	stopClosed                    // the workspace closed
	stopBroken                    // the output stream broke
)

// defaultPath is the PATH of env-replace commands when the image sets none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newSecret is the marker value of one exec: 128 random bits, so that no
// command can guess another's (it can read a running one's, see kill.go).
func newSecret() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// run executes one command in the workspace's container: through the
// container's agent when it has one (exec_agent.go), else as a Podman exec
// of its own (runREST).
func (w *Workspace) run(ctx context.Context, r execRun) (backend.ExecResult, error) {
	start := time.Now()
	res := backend.ExecResult{Command: r.shown, Cwd: r.cwd, Backend: "podman", Sandboxed: true}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("%s: %w", r.op, err)
	}
	release, err := w.enter(r.op)
	if err != nil {
		return res, err
	}
	defer release()
	st, err := w.ensure(ctx)
	if err != nil {
		return res, err
	}
	if conn := w.agentFor(ctx, st); conn != nil {
		if res, ok, err := w.runAgent(ctx, st, conn, r, start); ok {
			return res, err
		}
	}
	return w.runREST(ctx, r, start)
}

// restExec is a command started as a Podman exec of its own.
type restExec struct {
	st         *ctrState
	id, secret string // the kill's name for it, and its marker
	execID     string
	att        *attachment
}

// runREST runs r as a Podman exec: create and attach (startREST), wait
// for the end, the timeout, the caller or the workspace closing
// (awaitREST), kill the whole tree when it did not end by itself, read the
// exit code, and classify the outcome.
func (w *Workspace) runREST(ctx context.Context, r execRun, start time.Time) (backend.ExecResult, error) {
	res := backend.ExecResult{Command: r.shown, Cwd: r.cwd, Backend: "podman", Sandboxed: true}
	b := w.b
	x, err := w.startREST(ctx, r)
	if err != nil {
		return res, err
	}
	st := x.st
	sink := newOutputSink(b.limits.MaxOutputBytes, r.discard, r.output)
	hdr := newHeaderWriter(streamWriter{sink, backend.Stderr})
	done := make(chan error, 1)
	go func() { done <- x.att.copyOut(streamWriter{sink, backend.Stdout}, hdr) }()
	why, streamErr := w.awaitREST(ctx, done, r.timeout)
	var kill killReport
	if why != stopExited {
		kill = w.killTree(st, x.id, x.secret, hdr.waitRoot(done), b.grace(), -1)
		if why != stopBroken {
			// With its tree dead the stream ends at once; one that does not
			// is abandoned.
			select {
			case <-done:
			case <-time.After(streamEndWait):
				x.att.close()
				<-done
			}
		}
	}
	x.att.close()
	hdr.flush()
	sink.stop()
	var count <-chan taskCountResult
	if why == stopExited && !r.quiet && !w.keepBackground() {
		count = b.startTaskCount(st.id)
	}
	code, running, known := b.execExit(ctx, x.execID)
	if herr := st.wait(context.WithoutCancel(ctx)); herr != nil {
		return res, herr
	}
	if why == stopExited && !running && !r.quiet && !w.keepBackground() {
		// What the command left running in the background ends with it,
		// as on the host backend.
		kill = w.stopLeftovers(st, x.id, x.secret, hdr.root(), count)
	}
	res.Duration = time.Since(start)
	sink.result(&res)
	res.Stderr += kill.note
	switch {
	case !known && why == stopExited:
		return res, backend.Errorf(backend.ErrUnavailable, r.op, r.shown[0], "the command ran, but the Podman service did not say how it ended")
	case why == stopBroken:
		w.log(r, res, ctx)
		return res, backend.Errorf(backend.ErrUnavailable, r.op, r.shown[0],
			"lost the connection to the command (%v); it was stopped", streamErr)
	case why == stopExited && running:
		w.killTree(st, x.id, x.secret, hdr.root(), b.grace(), -1)
		return res, backend.Errorf(backend.ErrUnavailable, r.op, r.shown[0], "the command's output ended but the service says it still runs; it was stopped")
	}
	return res, w.classify(ctx, st, r, &res, why, code, kill.signal)
}

// startREST creates the exec (recreating a dead container once) and
// starts it attached.
func (w *Workspace) startREST(ctx context.Context, r execRun) (*restExec, error) {
	b := w.b
	x := &restExec{id: newID(), secret: newSecret()}
	var err error
	for attempt := 0; ; attempt++ {
		if x.st, err = w.ensure(ctx); err != nil {
			return nil, err
		}
		argv, env := w.command(x.st, x.secret, r)
		x.execID, err = b.execCreate(ctx, x.st.id, argv, env, r.cwd, r.stdin != nil)
		if err == nil {
			break
		}
		if attempt == 0 && containerGone(err) && ctx.Err() == nil {
			w.markDead(x.st, "its container stopped ("+firstLine(err.Error())+")")
			continue
		}
		return nil, b.svc.wrap(ctx, r.op, r.shown[0], err)
	}
	if err := ctx.Err(); err != nil {
		// Created but never started: nothing runs.
		return nil, fmt.Errorf("%s: %w", r.op, err)
	}
	var stdin io.Reader
	if r.stdin != nil {
		stdin = strings.NewReader(*r.stdin)
	}
	// The start is not abandoned when the caller gives up halfway: the
	// service may start the command all the same, and a kill that runs
	// before it has started finds nothing and leaves it running for good.
	// Once started, awaitREST sees the caller's end and the caller kills.
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), handshakeTimeout)
	x.att, err = b.svc.startAttached(sctx, x.execID, stdin)
	scancel()
	if err != nil {
		var se *startError
		if errors.As(err, &se) && containerGone(errors.New(se.msg)) {
			w.markDead(x.st, "its container stopped ("+se.msg+")")
			return nil, backend.Errorf(backend.ErrUnavailable, r.op, r.shown[0], "the container stopped as the command started; it is recreated on the next call")
		}
		if se == nil {
			// No answer to the start: the command may run all the same,
			// with nobody attached to stop it.
			w.killTree(x.st, x.id, x.secret, execRoot{}, b.grace(), -1)
		}
		return nil, err
	}
	return x, nil
}

// keepBackground reports whether what a command leaves running stays: by
// config for sessions, always in a managed container (a service started
// next to its code is the point of one).
func (w *Workspace) keepBackground() bool { return w.b.cfg.KeepBackground || w.managed }

// pidsLimit is the pids limit of w's container: the session's, or the
// managed containers' own.
func (w *Workspace) pidsLimit() int64 {
	if w.managed {
		return w.b.cfg.Containers.PidsLimit
	}
	return w.b.cfg.PidsLimit
}

// streamEndWait bounds the wait for a killed command's output stream to
// end. It normally ends at once; the bound is generous because a loaded
// service can take seconds to notice, and output read meanwhile is kept.
const streamEndWait = 10 * time.Second

// command wraps r for the exec: the wrapper shell, the marker, and for
// env-replace an `env -i` that keeps only PATH and the given variables.
func (w *Workspace) command(st *ctrState, secret string, r execRun) (argv, env []string) {
	script := wrapScript
	if r.script {
		script = scriptWrapScript
	}
	argv = []string{"/bin/sh", "-c", script, "sh"}
	env = []string{markerVar + "=" + secret}
	if !r.replace {
		for k, v := range r.env {
			env = append(env, k+"="+v)
		}
		return append(argv, r.argv...), env
	}
	path, ok := r.env["PATH"]
	if !ok {
		path = st.path()
	}
	argv = append(argv, "env", "-i", "--", "PATH="+path)
	for k, v := range r.env {
		if k != "PATH" {
			argv = append(argv, k+"="+v)
		}
	}
	cmd := r.argv
	if strings.Contains(cmd[0], "=") { // env would take it for a variable
		cmd = append([]string{"/bin/sh", "-c", `exec "$@"`, "sh"}, cmd...)
	}
	return append(argv, cmd...), env
}

func (b *Backend) execCreate(ctx context.Context, ctrID string, argv, env []string, workdir string, stdin bool) (string, error) {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return "", err
	}
	cfg := new(handlers.ExecCreateConfig)
	cfg.ExecOptions = dockerContainer.ExecOptions{
		Cmd: argv, Env: env, WorkingDir: workdir, User: b.cfg.User,
		AttachStdout: true, AttachStderr: true, AttachStdin: stdin,
	}
	return containers.ExecCreate(cctx, ctrID, cfg)
}

// execExit reads an ended exec's exit code, with a context of its own: the
// caller's may be cancelled by now, and the answer is still wanted.
func (b *Backend) execExit(ctx context.Context, execID string) (code int, running, known bool) {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	cctx, err := b.svc.ctx(ictx)
	if err != nil {
		return -1, false, false
	}
	insp, err := containers.ExecInspect(cctx, execID, nil)
	if err != nil {
		return -1, false, false
	}
	return insp.ExitCode, insp.Running, true
}

// execSimple runs argv in the container without wrapper or timeout of its
// own (ctx bounds it) and returns its exit code and combined output, at
// most 64 KiB.
func (b *Backend) execSimple(ctx context.Context, ctrID string, argv []string, env []string) (int, string, error) {
	// The container's own working directory: /workspace for a session's,
	// which a managed container may not have.
	execID, err := b.execCreate(ctx, ctrID, argv, env, "", false)
	if err != nil {
		return -1, "", b.svc.wrap(ctx, "exec", argv[0], err)
	}
	att, err := b.svc.startAttached(ctx, execID, nil)
	if err != nil {
		return -1, "", err
	}
	out := backend.NewOutputBuffer(64 << 10)
	stop := context.AfterFunc(ctx, att.close)
	err = att.copyOut(out, out)
	stop()
	att.close()
	if ctx.Err() != nil {
		return -1, out.String(), fmt.Errorf("exec %s: %w", argv[0], ctx.Err())
	}
	if err != nil {
		return -1, out.String(), backend.Errorf(backend.ErrUnavailable, "exec", argv[0], "lost the connection to the command: %v", err)
	}
	code, _, _ := b.execExit(ctx, execID)
	return code, out.String(), nil
}

// checkOOM looks, after a command died of SIGKILL, whether the memory
// cgroup's OOM killer did it. If so the result says so, and the container
// is recreated for the next command: the OOM killer may have taken other
// processes with it.
func (w *Workspace) checkOOM(st *ctrState, res *backend.ExecResult) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kills, ok := w.b.oomKills(ctx, st.id)
	if !ok || int64(kills) <= st.oomBase.Swap(int64(kills)) {
		return
	}
	res.Stderr += fmt.Sprintf("\nwai: the command was killed: the container ran out of memory (limit %s); the container is recreated for the next command\n", w.b.cfg.Memory)
	w.markDead(st, "out of memory")
	w.b.event(ctx, "runtime.podman.oom", w, "container_id", short(st.id))
}

// oomKills reads the memory cgroup's OOM kill count (cgroup v1
// memory.oom_control or v2 memory.events).
func (b *Backend) oomKills(ctx context.Context, ctrID string) (int, bool) {
	code, out, err := b.execSimple(ctx, ctrID, []string{"cat", "/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"}, nil)
	if err != nil || code == -1 {
		return 0, false
	}
	for _, line := range strings.Split(out, "\n") {
		var n int
		if _, err := fmt.Sscanf(line, "oom_kill %d", &n); err == nil {
			return n, true
		}
	}
	return 0, false
}

// log emits the backend's record of an exec, with what only the backend
// knows (the signal, script or exec). It is not shell.exec: the kernel
// emits that once per exec for every backend, and a second one from here
// would count each command twice in the event stream and the audit file.
func (w *Workspace) log(r execRun, res backend.ExecResult, ctx context.Context) {
	cmd := strings.Join(r.shown, " ")
	if len(cmd) > 200 {
		cmd = cmd[:200] + "…"
	}
	w.b.log.LogAttrs(ctx, slog.LevelDebug, "runtime.podman.exec",
		slog.String("session", w.session), slog.String("op", r.op), slog.String("command", cmd),
		slog.Int("exit", res.ExitCode), slog.Duration("duration", res.Duration),
		slog.Bool("truncated", res.Truncated), slog.Bool("timed_out", res.TimedOut), slog.Int("signal", res.Signal))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
