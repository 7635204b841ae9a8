package host

import (
	"context"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Background exec in managed containers: exec_background starts a command
// that outlives the call, exec_poll reads its state and output from given
// offsets on, exec_cancel kills its process tree. They run on the
// backend's job machinery (backend.ContainerJobs gives a container's
// backend.JobRunner) under the kernel's limits for a session's jobs: the
// command's length, the runtime cap (limits.job_max_runtime) and at most
// limits.max_jobs running at once in one container. The policy chain has
// judged the operation (containers.exec_background, …) before this runs,
// as it judges containers.exec, and exec_background's command as
// shell.exec in the container (containers_commands.go).

// ContainerJob is a background job of a managed container on the wire;
// Stdout and Stderr are set by exec_poll.
type ContainerJob struct {
	ID           string              `json:"id"`
	Container    string              `json:"container"`
	Command      []string            `json:"command"`
	Cwd          string              `json:"cwd,omitempty"`
	State        string              `json:"state"` // running, exited, timed_out, cancelled, lost
	ExitCode     int                 `json:"exit_code"`
	Signal       int                 `json:"signal,omitempty"`
	StartedAt    time.Time           `json:"started_at"`
	EndedAt      *time.Time          `json:"ended_at,omitempty"`
	MaxRuntimeMS int64               `json:"max_runtime_ms"`
	Stdout       *ContainerJobOutput `json:"stdout,omitempty"`
	Stderr       *ContainerJobOutput `json:"stderr,omitempty"`
}

// ContainerJobOutput is one stream of a job's output from Offset on (see
// backend.JobOutput): ask from Next the next time.
type ContainerJobOutput struct {
	Text    string `json:"text"`
	Offset  int64  `json:"offset"`
	Skipped int64  `json:"skipped,omitempty"`
	Next    int64  `json:"next"`
	More    bool   `json:"more,omitempty"`
	Total   int64  `json:"total"`
}

func toContainerJob(container string, j backend.JobInfo) *ContainerJob {
	out := &ContainerJob{ID: j.ID, Container: container, Command: j.Command, Cwd: j.Cwd, State: string(j.State),
		ExitCode: j.ExitCode, Signal: j.Signal, StartedAt: j.StartedAt, MaxRuntimeMS: j.MaxRuntime.Milliseconds()}
	if !j.EndedAt.IsZero() {
		ended := j.EndedAt
		out.EndedAt = &ended
	}
	return out
}

func toContainerJobOutput(o backend.JobOutput) *ContainerJobOutput {
	return &ContainerJobOutput{Text: o.Text, Offset: o.Offset, Skipped: o.Skipped, Next: o.Next, More: o.More, Total: o.Total}
}

// containerJob runs exec_background, exec_poll or exec_cancel.
func (s *Session) containerJob(ctx context.Context, c backend.Containers, ref backend.ContainerRef, req ContainerRequest) (*ContainerJob, error) {
	op := ActionContainersPrefix + req.Operation
	cj, ok := c.(backend.ContainerJobs)
	if !ok {
		return nil, backend.Errorf(backend.ErrUnavailable, op, ref.Name, "this backend runs no background jobs in containers: use exec, with a timeout")
	}
	if req.Operation == "exec_background" {
		return s.startContainerJob(ctx, cj, ref, req)
	}
	if req.JobID == "" {
		return nil, backend.Errorf(backend.ErrInvalid, op, ref.Name, "give job_id: the id exec_background returned")
	}
	jr, err := cj.ContainerJobs(ctx, ref)
	if err != nil {
		return nil, err
	}
	if req.Operation == "exec_cancel" {
		info, err := jr.CancelJob(ctx, req.JobID)
		if err != nil {
			return nil, err
		}
		return toContainerJob(ref.Name, info), nil
	}
	if req.StdoutOffset < 0 || req.StderrOffset < 0 {
		return nil, backend.Errorf(backend.ErrInvalid, op, req.JobID, "stdout_offset and stderr_offset must not be negative: pass the previous answer's next offsets")
	}
	st, err := jr.JobStatus(ctx, req.JobID, backend.JobOffsets{Stdout: req.StdoutOffset, Stderr: req.StderrOffset})
	if err != nil {
		return nil, err
	}
	out := toContainerJob(ref.Name, st.JobInfo)
	out.Stdout, out.Stderr = toContainerJobOutput(st.Stdout), toContainerJobOutput(st.Stderr)
	return out, nil
}

// checkJobSlot counts jr's running jobs against limits.max_jobs: at the
// limit it is ErrInvalid (a request that breaks a limit, not a backend
// that cannot serve) saying how many where (the container, the session)
// runs, and what frees a slot. The caller holds its start lock,
// so the count and the start agree.
func (s *Session) checkJobSlot(ctx context.Context, jr backend.JobRunner, op, name, where, free string) error {
	jobs, err := jr.ListJobs(ctx)
	if err != nil {
		return err
	}
	running := 0
	for _, j := range jobs {
		if j.Running() {
			running++
		}
	}
	if running >= s.k.cfg.MaxJobs {
		return backend.Errorf(backend.ErrInvalid, op, name,
			"%s already runs %d background jobs, the limit (limits.max_jobs): %s", where, running, free)
	}
	return nil
}

// startContainerJob checks the command and runtime as for a session's
// job, counts the container's running jobs against limits.max_jobs, and
// starts it.
func (s *Session) startContainerJob(ctx context.Context, cj backend.ContainerJobs, ref backend.ContainerRef, req ContainerRequest) (*ContainerJob, error) {
	const op = "containers.exec_background"
	if strings.TrimSpace(req.Command) == "" {
		return nil, backend.Errorf(backend.ErrInvalid, op, ref.Name, "give command: the shell command to run in the background")
	}
	if req.Timeout < 0 {
		return nil, backend.Errorf(backend.ErrInvalid, op, ref.Name, "timeout is the job's max runtime in seconds and must not be negative")
	}
	limit := s.k.cfg.JobMaxRuntime
	runtime := time.Duration(req.Timeout) * time.Second
	if runtime == 0 || runtime > limit {
		runtime = limit // a caller can shorten it, never extend it
	}
	jreq := backend.JobRequest{Shell: req.Command, Cwd: req.Workdir, MaxRuntime: runtime}
	if _, err := s.k.cfg.Limits.CheckExec(jreq.Exec()); err != nil {
		return nil, err
	}
	jr, err := cj.ContainerJobs(ctx, ref)
	if err != nil {
		return nil, err
	}
	// One start at a time in the session: the count and the start agree.
	s.jobs.start.Lock()
	defer s.jobs.start.Unlock()
	if err := s.checkJobSlot(ctx, jr, op, ref.Name, "the container", "poll them until they end, or cancel one with exec_cancel"); err != nil {
		return nil, err
	}
	info, err := jr.StartJob(ctx, jreq)
	s.k.log.Info("containers.job_start", "session", s.spec.Session, "container", ref.Name, "job", info.ID,
		"command", req.Command, "tool", callTool(ctx), "error", errString(err))
	if err != nil {
		return nil, err
	}
	return toContainerJob(ref.Name, info), nil
}
