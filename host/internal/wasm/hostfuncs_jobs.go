package wasm

import (
	"context"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Background jobs (capability "jobs"): wai_job_start, wai_job_status,
// wai_job_cancel, wai_job_list. An Env offers them by implementing
// JobsEnv; the kernel's does, through its guard.

// CapJobs grants the wai_job_* host functions.
const CapJobs = "jobs"

// JobsEnv is an Env whose session runs background jobs.
type JobsEnv interface {
	Jobs() backend.JobRunner
}

func init() {
	for name, h := range map[string]handler{
		"wai_job_start":  serveJobStart,
		"wai_job_status": serveJobStatus,
		"wai_job_cancel": serveJobCancel,
		"wai_job_list":   serveJobList,
	} {
		handlers[name] = h
		hostCaps[name] = CapJobs
	}
	knownCaps = append(knownCaps, CapJobs)
}

type jobStartRequest struct {
	Argv         []string          `json:"argv"`
	Shell        string            `json:"shell"`
	Cwd          string            `json:"cwd"`
	Env          map[string]string `json:"env"`
	EnvMode      string            `json:"env_mode"`
	MaxRuntimeMS int64             `json:"max_runtime_ms"`
}

type jobRequest struct {
	ID           string `json:"id"`
	StdoutOffset int64  `json:"stdout_offset"`
	StderrOffset int64  `json:"stderr_offset"`
}

type jobInfo struct {
	ID           string   `json:"id"`
	Command      []string `json:"command"`
	Cwd          string   `json:"cwd"`
	State        string   `json:"state"`
	ExitCode     int      `json:"exit_code"`
	Signal       int      `json:"signal"`
	StartedAt    string   `json:"started_at"`
	EndedAt      string   `json:"ended_at,omitempty"`
	MaxRuntimeMS int64    `json:"max_runtime_ms"`
	Backend      string   `json:"backend"`
	Sandboxed    bool     `json:"sandboxed"`
	Note         string   `json:"note,omitempty"`
}

type jobOutput struct {
	Text    string `json:"text"`
	Offset  int64  `json:"offset"`
	Skipped int64  `json:"skipped"`
	Next    int64  `json:"next"`
	More    bool   `json:"more"`
	Total   int64  `json:"total"`
}

type jobStatus struct {
	jobInfo
	Stdout jobOutput `json:"stdout"`
	Stderr jobOutput `json:"stderr"`
}

type jobList struct {
	Jobs []jobInfo `json:"jobs"`
}

func toJobInfo(j backend.JobInfo) jobInfo {
	out := jobInfo{ID: j.ID, Command: nonNil(j.Command), Cwd: j.Cwd, State: string(j.State), ExitCode: j.ExitCode,
		Signal: j.Signal, StartedAt: j.StartedAt.UTC().Format(time.RFC3339Nano), MaxRuntimeMS: ms(j.MaxRuntime),
		Backend: j.Backend, Sandboxed: j.Sandboxed, Note: j.Note}
	if !j.EndedAt.IsZero() {
		out.EndedAt = j.EndedAt.UTC().Format(time.RFC3339Nano)
	}
	return out
}

func toJobOutput(o backend.JobOutput) jobOutput {
	return jobOutput{Text: o.Text, Offset: o.Offset, Skipped: o.Skipped, Next: o.Next, More: o.More, Total: o.Total}
}

func jobsOf(env Env, op string) (backend.JobRunner, error) {
	if je, ok := env.(JobsEnv); ok {
		if jr := je.Jobs(); jr != nil {
			return jr, nil
		}
	}
	return nil, backend.Errorf(backend.ErrUnavailable, op, "", "this host runs no background jobs")
}

func serveJobStart(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
	var r jobStartRequest
	if err := decodeRequest("job.start", b, &r); err != nil {
		return nil, err
	}
	if r.MaxRuntimeMS < 0 {
		return nil, backend.Errorf(backend.ErrInvalid, "job.start", "", "max_runtime_ms must not be negative, got %d", r.MaxRuntimeMS)
	}
	jr, err := jobsOf(env, "job.start")
	if err != nil {
		return nil, err
	}
	info, err := jr.StartJob(ctx, backend.JobRequest{Argv: r.Argv, Shell: r.Shell, Cwd: r.Cwd, Env: r.Env,
		EnvMode: backend.EnvMode(r.EnvMode), MaxRuntime: time.Duration(r.MaxRuntimeMS) * time.Millisecond})
	return toJobInfo(info), err
}

func serveJobStatus(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
	var r jobRequest
	if err := decodeRequest("job.status", b, &r); err != nil {
		return nil, err
	}
	jr, err := jobsOf(env, "job.status")
	if err != nil {
		return nil, err
	}
	st, err := jr.JobStatus(ctx, r.ID, backend.JobOffsets{Stdout: r.StdoutOffset, Stderr: r.StderrOffset})
	return jobStatus{jobInfo: toJobInfo(st.JobInfo), Stdout: toJobOutput(st.Stdout), Stderr: toJobOutput(st.Stderr)}, err
}

func serveJobCancel(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
	var r jobRequest
	if err := decodeRequest("job.cancel", b, &r); err != nil {
		return nil, err
	}
	jr, err := jobsOf(env, "job.cancel")
	if err != nil {
		return nil, err
	}
	info, err := jr.CancelJob(ctx, r.ID)
	return toJobInfo(info), err
}

func serveJobList(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
	if err := decodeRequest("job.list", b, &empty{}); err != nil {
		return nil, err
	}
	jr, err := jobsOf(env, "job.list")
	if err != nil {
		return nil, err
	}
	jobs, err := jr.ListJobs(ctx)
	out := jobList{Jobs: make([]jobInfo, len(jobs))}
	for i, j := range jobs {
		out.Jobs[i] = toJobInfo(j)
	}
	return out, err
}
