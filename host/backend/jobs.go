package backend

import (
	"context"
	"strings"
	"time"
)

// JobRunner is implemented by workspaces that can run commands in the
// background: a job starts in one call and is polled, read and cancelled
// in later ones, by this process or another that opens the same kept
// session. Find it by type assertion on a Workspace.
//
// A job's state lives with the workspace, not with the process that
// started it: a kept session's jobs outlive the process (wai exec, one
// MCP connection) and are seen by the next Open, from any process or
// Backend instance; closing a session that is not kept, or removing it,
// kills its jobs, whole process trees. Each job keeps a bounded head and
// tail of each output stream however much it prints, and is killed at its
// MaxRuntime like a command at its timeout.
//
// A job's identity and results are the backend's word, kept where the
// job's own commands cannot forge them (the host backend, which is no
// sandbox, says where it keeps them).
type JobRunner interface {
	// StartJob validates req (ErrInvalid before anything runs) and
	// starts it; it returns once the job runs (or could not start: that
	// is a job that exited 127/126, like a command).
	StartJob(ctx context.Context, req JobRequest) (JobInfo, error)
	// JobStatus describes job id and returns its output from the given
	// offsets on (see JobOutput). ErrNotFound for a job this workspace
	// does not have.
	JobStatus(ctx context.Context, id string, since JobOffsets) (JobStatus, error)
	// CancelJob kills a running job's whole process tree (SIGTERM, then
	// SIGKILL after the backend's grace) and returns once it is dead. A
	// job that already ended is left as it was (no error).
	CancelJob(ctx context.Context, id string) (JobInfo, error)
	// ListJobs lists the workspace's jobs, running and ended, oldest
	// first.
	ListJobs(ctx context.Context) ([]JobInfo, error)
}

// RunningJobLister is implemented by JobRunner workspaces whose ListJobs
// would start something to answer (a container): RunningJobs lists the
// jobs running now without starting anything, none when the sandbox does
// not run. The kernel asks it before it stops or releases a workspace: a
// running job keeps a session from being idle, and the jobs a stop ends
// are reported lost. Workspaces without it are asked ListJobs.
type RunningJobLister interface {
	RunningJobs(ctx context.Context) ([]JobInfo, error)
}

// JobRequest is a command to run in the background. Exactly one of Argv
// and Shell is set, as in ExecRequest; a job has no stdin.
type JobRequest struct {
	Argv    []string
	Shell   string
	Cwd     string
	Env     map[string]string
	EnvMode EnvMode
	// MaxRuntime kills the job when it has run this long; zero means
	// DefaultJobRuntime. The kernel clamps it to its configured cap.
	MaxRuntime time.Duration
}

// Command returns the argv the job runs: Argv, or the shell invocation.
func (r JobRequest) Command() []string {
	return ExecRequest{Argv: r.Argv, Shell: r.Shell}.Command()
}

// Exec is the request as a command, for validation with Limits.CheckExec
// (the runtime is not a command timeout and is checked apart).
func (r JobRequest) Exec() ExecRequest {
	return ExecRequest{Argv: r.Argv, Shell: r.Shell, Cwd: r.Cwd, Env: r.Env, EnvMode: r.EnvMode}
}

// DefaultJobRuntime is a job's MaxRuntime when the request names none.
const DefaultJobRuntime = time.Hour

// CheckJob is what a backend's StartJob checks before it starts anything:
// the command as CheckExec checks one, and a MaxRuntime that is not
// negative. It returns req with a zero MaxRuntime made DefaultJobRuntime.
func (l Limits) CheckJob(op string, req JobRequest) (JobRequest, error) {
	if _, err := l.CheckExec(req.Exec()); err != nil {
		return req, err
	}
	if req.MaxRuntime < 0 {
		return req, Errorf(ErrInvalid, op, "", "max runtime %s is negative", req.MaxRuntime)
	}
	if req.MaxRuntime == 0 {
		req.MaxRuntime = DefaultJobRuntime
	}
	return req, nil
}

// JobState is where a job is in its life.
type JobState string

const (
	JobRunning   JobState = "running"
	JobExited    JobState = "exited"    // ended by itself; ExitCode and Signal say how
	JobTimedOut  JobState = "timed_out" // killed at MaxRuntime; ExitCode 124
	JobCancelled JobState = "cancelled" // killed by CancelJob
	// JobLost: the job's supervisor died without saying how the job
	// ended (the machine rebooted, someone killed it); its processes were
	// killed where the backend could find them.
	JobLost JobState = "lost"
)

// JobInfo describes a job.
type JobInfo struct {
	ID         string
	Command    []string
	Cwd        string
	State      JobState
	ExitCode   int // meaningful once the state is not running
	Signal     int // the signal that ended it, 0 if none
	StartedAt  time.Time
	EndedAt    time.Time // zero while running
	MaxRuntime time.Duration
	Backend    string
	Sandboxed  bool
	// Note says why the job ended when the state alone does not: for a
	// job the kernel reports lost, what ended it and when.
	Note string
}

// Running reports whether the job still runs.
func (j JobInfo) Running() bool { return j.State == JobRunning }

// JobOffsets are byte offsets into a job's output streams, as returned in
// JobOutput.Next: pass the previous answer's to read only what is new.
type JobOffsets struct{ Stdout, Stderr int64 }

// JobStatus is a job and its output since the offsets asked for.
type JobStatus struct {
	JobInfo
	Stdout, Stderr JobOutput
}

// JobOutput is a piece of one stream of a job's output. A backend keeps
// the first and the last bytes of each stream (a head and a tail ring,
// each half of its per-stream budget); bytes between them are dropped once
// a job prints more than the budget.
type JobOutput struct {
	// Text is the stream's bytes from Offset on, valid UTF-8, at most
	// Limits.MaxOutputBytes of them per answer.
	Text string
	// Offset is where Text starts. It is past the offset asked for when
	// those bytes were dropped (Skipped says how many).
	Offset  int64
	Skipped int64
	// Next is the offset to ask from next time; More says bytes past it
	// are already there (the answer was capped).
	Next int64
	More bool
	// Total is how many bytes the job has written to the stream.
	Total int64
}

// ReadJobOutput answers a read of one stream from since on, for a backend
// that keeps head (the stream's first bytes) and tail (its last bytes,
// following head with or without a gap) of a stream total bytes long. At
// most max bytes are returned, cut at a character boundary when possible.
func ReadJobOutput(head, tail []byte, total, since int64, max int) JobOutput {
	since = min(max64(since, 0), total)
	tailStart := total - int64(len(tail))
	out := JobOutput{Total: total, Offset: since}
	var seg []byte
	switch h := int64(len(head)); {
	case since < h && tailStart == h: // no gap: head and tail are one run
		seg = append(append([]byte{}, head[since:]...), tail...)
	case since < h:
		seg = head[since:]
	default:
		if since < tailStart {
			out.Skipped, since = tailStart-since, tailStart
			out.Offset = since
		}
		seg = tail[since-tailStart:]
	}
	if len(seg) > max {
		cut := max
		for i := 0; i < 3 && cut > 1 && !utf8RuneStart(seg[cut]); i++ {
			cut--
		}
		seg = seg[:cut]
	}
	out.Text = toValidUTF8(seg)
	out.Next = since + int64(len(seg))
	out.More = out.Next < total
	return out
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func toValidUTF8(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }
