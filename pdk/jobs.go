package pdk

import (
	"time"

	"github.com/wai-dev/wai/pdk/internal/imports"
)

// JobsClient runs commands in the background (capability "jobs"): a job
// started in one tool call is polled and cancelled in later ones, and dies
// with its session. Use the package variable Jobs.
type JobsClient struct{}

// Jobs is the session's background jobs.
var Jobs JobsClient

// JobRequest is a command to run in the background: exactly one of Argv
// and Shell. MaxRuntime zero means the host's default; the host caps it.
type JobRequest struct {
	Argv       []string          `json:"argv,omitempty"`
	Shell      string            `json:"shell,omitempty"`
	Cwd        string            `json:"cwd,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	EnvMode    string            `json:"env_mode,omitempty"`
	MaxRuntime time.Duration     `json:"-"`
}

// JobInfo describes a job. State is running, exited, timed_out,
// cancelled or lost; ExitCode and Signal count once it is not running.
type JobInfo struct {
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
	// Note says why a job ended when its state alone does not (a lost
	// job: what ended it, and when).
	Note string `json:"note,omitempty"`
}

// JobOutput is one stream's output from Offset on; ask from Next next
// time. Skipped bytes were dropped between the kept head and tail; More
// says the answer was capped and more is there already.
type JobOutput struct {
	Text    string `json:"text"`
	Offset  int64  `json:"offset"`
	Skipped int64  `json:"skipped"`
	Next    int64  `json:"next"`
	More    bool   `json:"more"`
	Total   int64  `json:"total"`
}

// JobStatus is a job and its output since the offsets asked for.
type JobStatus struct {
	JobInfo
	Stdout JobOutput `json:"stdout"`
	Stderr JobOutput `json:"stderr"`
}

type wireJobStart struct {
	JobRequest
	MaxRuntimeMS int64 `json:"max_runtime_ms,omitempty"`
}

type wireJobID struct {
	ID           string `json:"id"`
	StdoutOffset int64  `json:"stdout_offset,omitempty"`
	StderrOffset int64  `json:"stderr_offset,omitempty"`
}

// Start starts a job; it returns once the command runs.
func (JobsClient) Start(req JobRequest) (JobInfo, error) {
	var out JobInfo
	err := callHost("wai_job_start", imports.JobStart, wireJobStart{JobRequest: req, MaxRuntimeMS: ms(req.MaxRuntime)}, &out)
	return out, err
}

// Status describes job id with its output from the given byte offsets.
func (JobsClient) Status(id string, stdoutOffset, stderrOffset int64) (JobStatus, error) {
	var out JobStatus
	err := callHost("wai_job_status", imports.JobStatus, wireJobID{ID: id, StdoutOffset: stdoutOffset, StderrOffset: stderrOffset}, &out)
	return out, err
}

// Cancel kills a running job's whole process tree; an ended job is left
// as it was.
func (JobsClient) Cancel(id string) (JobInfo, error) {
	var out JobInfo
	err := callHost("wai_job_cancel", imports.JobCancel, wireJobID{ID: id}, &out)
	return out, err
}

// List lists the session's jobs, oldest first.
func (JobsClient) List() ([]JobInfo, error) {
	var out struct {
		Jobs []JobInfo `json:"jobs"`
	}
	err := callHost("wai_job_list", imports.JobList, struct{}{}, &out)
	return out.Jobs, err
}
