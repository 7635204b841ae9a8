//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/containers/podman/v5/pkg/api/handlers"
	"github.com/containers/podman/v5/pkg/bindings/containers"
	dockerContainer "github.com/docker/docker/api/types/container"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
)

// jobExecWait bounds one job query or a supervisor's start, past the
// grace a cancel takes.
const jobExecWait = 30 * time.Second

// capWriter keeps at most max bytes and notes overflow; with line set it
// closes got at the first newline.
type capWriter struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	max      int
	overflow bool
	line     bool
	got      chan struct{}
	once     sync.Once
}

func newCapWriter(max int, line bool) *capWriter {
	return &capWriter{max: max, line: line, got: make(chan struct{})}
}

func (c *capWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		c.overflow = true
		c.once.Do(func() { close(c.got) })
		return len(p), nil
	}
	c.buf.Write(p)
	if c.line && bytes.IndexByte(p, '\n') >= 0 {
		c.once.Do(func() { close(c.got) })
	}
	return len(p), nil
}

func (c *capWriter) bytes() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte{}, c.buf.Bytes()...), c.overflow
}

// jobStart runs a supervisor as an exec of its own and returns the one
// line it prints once the job runs; the exec runs on after that.
func (b *Backend) jobStart(ctx context.Context, ctrID string, argv, env []string) ([]byte, error) {
	const op = "job.start"
	ctx, cancel := context.WithTimeout(ctx, jobExecWait)
	defer cancel()
	execID, err := b.execCreate(ctx, ctrID, argv, env, "/", false)
	if err != nil {
		return nil, b.svc.wrap(ctx, op, "wai-agent", err)
	}
	att, err := b.svc.startAttached(ctx, execID, nil)
	if err != nil {
		return nil, err
	}
	defer att.close() // the supervisor writes nothing more; it runs on
	out, errOut := newCapWriter(64<<10, true), newCapWriter(4<<10, false)
	ended := make(chan error, 1)
	go func() { ended <- att.copyOut(out, errOut) }()
	select {
	case <-out.got:
	case <-ended:
	case <-ctx.Done():
		return nil, backend.Errorf(backend.ErrUnavailable, op, "", "the job's supervisor did not start in time: %v", ctx.Err())
	}
	line, over := out.bytes()
	if i := bytes.IndexByte(line, '\n'); i >= 0 && !over {
		return line[:i], nil
	}
	e, _ := errOut.bytes()
	return nil, backend.Errorf(backend.ErrUnavailable, op, "", "the job's supervisor could not start the job: %s", firstLine(string(e)))
}

// jobQuery runs `wai-agent job ARGS...`, reads at most max bytes of its
// answer and decodes it into v. Exit 3 is a job the container does not
// have.
func (b *Backend) jobQuery(ctx context.Context, ctrID, op, id string, max int, v any, args ...string) error {
	return queryJobs(ctx, b.svc, b.cfg.User, ctrID, op, id, max, jobExecWait+b.grace(), v, args...)
}

// queryJobs is jobQuery on a service, for the sweeps of other processes'
// sessions too.
func queryJobs(ctx context.Context, svc *service, user, ctrID, op, id string, max int, wait time.Duration, v any, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	cctx, err := svc.ctx(ctx)
	if err != nil {
		return err
	}
	cfg := new(handlers.ExecCreateConfig)
	cfg.ExecOptions = dockerContainer.ExecOptions{Cmd: append([]string{agentMountPath, "job"}, args...),
		WorkingDir: "/", User: user, AttachStdout: true, AttachStderr: true}
	execID, err := containers.ExecCreate(cctx, ctrID, cfg)
	if err != nil {
		return svc.wrap(ctx, op, "wai-agent", err)
	}
	att, err := svc.startAttached(ctx, execID, nil)
	if err != nil {
		return err
	}
	out, errOut := newCapWriter(max, false), newCapWriter(4<<10, false)
	stop := context.AfterFunc(ctx, att.close)
	err = att.copyOut(out, errOut)
	stop()
	att.close()
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", op, ctx.Err())
	}
	if err != nil {
		return backend.Errorf(backend.ErrUnavailable, op, id, "lost the connection to wai-agent: %v", err)
	}
	code := -1
	if insp, err := containers.ExecInspect(cctx, execID, nil); err == nil {
		code = insp.ExitCode
	}
	body, over := out.bytes()
	e, _ := errOut.bytes()
	switch {
	case code == 3:
		return backend.Errorf(backend.ErrNotFound, op, id, "no such job in this session (list them with job_list)")
	case code == 126 || code == 127:
		return fmt.Errorf("%s %s: %w", op, id, errNoAgent)
	case code != 0:
		return backend.Errorf(backend.ErrUnavailable, op, id, "wai-agent failed (exit %d): %s", code, firstLine(string(e)))
	case over:
		return backend.Errorf(backend.ErrUnavailable, op, id, "wai-agent answered more than %d bytes", max)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return backend.Errorf(backend.ErrUnavailable, op, id, "wai-agent's answer is not valid: %v", err)
	}
	return nil
}

// errNoAgent: the container has no wai-agent to ask (the exec could not
// run it), so it runs no background jobs.
var errNoAgent = backend.Errorf(backend.ErrUnavailable, "job", "wai-agent",
	"the container has no wai-agent: it was made without one, so it runs no background jobs")

// runningJobs counts the running jobs of a container, for the idle
// sweeps: a running job counts as use. A container without the agent has
// none. One that does not answer (a timeout under load, a lost
// connection) is an error the caller must not read as "none": removing
// the container would kill the jobs it could not see.
func runningJobs(ctx context.Context, svc *service, user, ctrID string) (int, error) {
	var infos []agentproto.JobInfo
	err := queryJobs(ctx, svc, user, ctrID, "job.list", "", 4<<20, 15*time.Second, &infos, "list")
	if errors.Is(err, errNoAgent) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, j := range infos {
		if j.State == "running" {
			n++
		}
	}
	return n, nil
}

var jobStates = map[string]backend.JobState{"running": backend.JobRunning, "exited": backend.JobExited,
	"timed_out": backend.JobTimedOut, "cancelled": backend.JobCancelled, "lost": backend.JobLost}

// jobInfo checks a job as the container describes it.
func (b *Backend) jobInfo(op string, ji agentproto.JobInfo) (backend.JobInfo, error) {
	state, ok := jobStates[ji.State]
	bad := !ok || !jobIDPattern.MatchString(ji.ID) || len(ji.Command) == 0 || ji.StartedNS <= 0 ||
		ji.StartedNS > time.Now().Add(time.Minute).UnixNano() ||
		ji.MaxRuntimeMS <= 0 || (state != backend.JobRunning && ji.EndedNS <= 0) || ji.Signal < 0 || ji.Signal > 64
	if bad {
		return backend.JobInfo{}, backend.Errorf(backend.ErrUnavailable, op, ji.ID, "a job record in the container is not valid")
	}
	info := backend.JobInfo{ID: ji.ID, Command: ji.Command, Cwd: ji.Cwd, State: state, ExitCode: ji.ExitCode,
		Signal: ji.Signal, StartedAt: time.Unix(0, ji.StartedNS).UTC(),
		MaxRuntime: time.Duration(ji.MaxRuntimeMS) * time.Millisecond, Backend: "podman", Sandboxed: true}
	if state != backend.JobRunning {
		info.EndedAt = time.Unix(0, ji.EndedNS).UTC()
	}
	return info, nil
}

// jobOutput turns a stream window into the answer, after checking that it
// is the window asked for: at most max bytes, from since (or past it by
// what was skipped), within the total.
func jobOutput(s agentproto.JobStream, since int64, max int) (backend.JobOutput, error) {
	since = min(max64(since, 0), max64(s.Total, 0))
	end := s.Offset + int64(len(s.Data))
	if s.Total < 0 || s.Skipped < 0 || len(s.Data) > max || s.Offset != since+s.Skipped || end > s.Total {
		return backend.JobOutput{}, errors.New("the window does not add up")
	}
	out := backend.ReadJobOutput(nil, s.Data, end, s.Offset, max)
	out.Skipped, out.Total = s.Skipped, s.Total
	out.More = out.Next < s.Total
	return out, nil
}
