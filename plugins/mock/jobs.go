package mock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// The mock's background jobs answer with canned results like its commands.
// A job ends at once with its canned result, unless HoldJobs keeps new
// jobs running until FinishJobs or CancelJob. Jobs belong to the
// workspace: a kept session keeps them across Opens of the same Backend,
// and closing a session that is not kept cancels them.

type mockJobs struct {
	mu   sync.Mutex
	hold bool
	list []*mockJob
}

type mockJob struct {
	info           backend.JobInfo
	canned         backend.ExecResult
	stdout, stderr []byte
}

// HoldJobs makes jobs started from now on stay running until FinishJobs
// or CancelJob (hold true), or end at once (false, the default).
func (w *Workspace) HoldJobs(hold bool) {
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	w.jobs.hold = hold
}

// FinishJobs ends every running job with its canned result.
func (w *Workspace) FinishJobs() {
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	for _, j := range w.jobs.list {
		if j.info.Running() {
			j.finish()
		}
	}
}

func (j *mockJob) finish() {
	j.info.State, j.info.ExitCode, j.info.Signal = backend.JobExited, j.canned.ExitCode, j.canned.Signal
	if j.canned.TimedOut {
		j.info.State, j.info.ExitCode = backend.JobTimedOut, backend.TimeoutExitCode
	}
	j.info.EndedAt = time.Now().UTC()
}

func (j *mockJob) cancel() {
	j.info.State, j.info.Signal, j.info.ExitCode = backend.JobCancelled, int(syscall.SIGTERM), 128+int(syscall.SIGTERM)
	j.info.EndedAt = time.Now().UTC()
}

// StartJob validates req as a real backend would and starts a job with
// the canned result of its command.
func (w *Workspace) StartJob(ctx context.Context, req backend.JobRequest) (backend.JobInfo, error) {
	const op = "job.start"
	if err := w.live(ctx, op); err != nil {
		return backend.JobInfo{}, err
	}
	if _, err := w.limits().CheckExec(req.Exec()); err != nil {
		return backend.JobInfo{}, err
	}
	if req.MaxRuntime < 0 {
		return backend.JobInfo{}, backend.Errorf(backend.ErrInvalid, op, "", "max runtime %s is negative", req.MaxRuntime)
	}
	if req.MaxRuntime == 0 {
		req.MaxRuntime = backend.DefaultJobRuntime
	}
	dir, err := w.fs.dir(op, req.Cwd)
	if err != nil {
		return backend.JobInfo{}, err
	}
	text := req.Shell
	if text == "" {
		text = strings.Join(req.Argv, " ")
	}
	res := w.shell.answer(text)
	var id [6]byte
	_, _ = rand.Read(id[:])
	j := &mockJob{canned: res, stdout: []byte(res.Stdout), stderr: []byte(res.Stderr), info: backend.JobInfo{
		ID: "j" + hex.EncodeToString(id[:]), Command: slices.Clone(req.Command()), Cwd: path.Join(Root, dir),
		State: backend.JobRunning, StartedAt: time.Now().UTC(), MaxRuntime: req.MaxRuntime, Backend: Name, Sandboxed: true,
	}}
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	if !w.jobs.hold {
		j.finish()
	}
	w.jobs.list = append(w.jobs.list, j)
	return j.info, nil
}

func (w *Workspace) job(op, id string) (*mockJob, error) {
	for _, j := range w.jobs.list {
		if j.info.ID == id {
			return j, nil
		}
	}
	return nil, backend.Errorf(backend.ErrNotFound, op, id, "no such job in this session (list them with job_list)")
}

// JobStatus answers the job's state and its canned output from since on,
// bounded like a real backend's (head and tail of 4 × MaxOutputBytes).
func (w *Workspace) JobStatus(ctx context.Context, id string, since backend.JobOffsets) (backend.JobStatus, error) {
	if err := w.live(ctx, "job.status"); err != nil {
		return backend.JobStatus{}, err
	}
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	j, err := w.job("job.status", id)
	if err != nil {
		return backend.JobStatus{}, err
	}
	max := w.limits().MaxOutputBytes
	return backend.JobStatus{JobInfo: cloneJob(j.info),
		Stdout: readBounded(j.stdout, 4*max, since.Stdout, max),
		Stderr: readBounded(j.stderr, 4*max, since.Stderr, max)}, nil
}

func readBounded(b []byte, budget int, since int64, max int) backend.JobOutput {
	h := budget / 2
	if len(b) <= budget {
		return backend.ReadJobOutput(b, nil, int64(len(b)), since, max)
	}
	return backend.ReadJobOutput(b[:h], b[len(b)-(budget-h):], int64(len(b)), since, max)
}

// CancelJob cancels a running job; an ended one is left as it was.
func (w *Workspace) CancelJob(ctx context.Context, id string) (backend.JobInfo, error) {
	if err := w.live(ctx, "job.cancel"); err != nil {
		return backend.JobInfo{}, err
	}
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	j, err := w.job("job.cancel", id)
	if err != nil {
		return backend.JobInfo{}, err
	}
	if j.info.Running() {
		j.cancel()
	}
	return cloneJob(j.info), nil
}

// ListJobs lists the workspace's jobs, oldest first.
func (w *Workspace) ListJobs(ctx context.Context) ([]backend.JobInfo, error) {
	if err := w.live(ctx, "job.list"); err != nil {
		return nil, err
	}
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	out := make([]backend.JobInfo, len(w.jobs.list))
	for i, j := range w.jobs.list {
		out[i] = cloneJob(j.info)
	}
	return out, nil
}

// endJobs cancels what still runs when the session ends.
func (w *Workspace) endJobs() {
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	for _, j := range w.jobs.list {
		if j.info.Running() {
			j.cancel()
		}
	}
}

func cloneJob(j backend.JobInfo) backend.JobInfo {
	j.Command = slices.Clone(j.Command)
	return j
}

// Interface guards
var _ backend.JobRunner = (*Workspace)(nil)
