// Command jobs is the bundled tool plugin of background jobs: job_start,
// job_status, job_cancel and job_list. A job is a command that outlives
// the tool call that started it; later calls poll its state and output
// (from an offset, so each poll returns only what is new) and cancel it.
// Jobs pass the same limits and policies as shell_execute and die with
// their session.
package main

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/shellfmt"
)

type startParams struct {
	Command           []string          `json:"command" jsonschema:"the program and its arguments, run directly without a shell (use [\"sh\",\"-c\",\"...\"] for pipes); ASCII, at most 4,096 characters together"`
	Cwd               string            `json:"cwd,omitempty" jsonschema:"working directory relative to the workspace root (default the root)"`
	Env               map[string]string `json:"env,omitempty" jsonschema:"extra environment variables"`
	MaxRuntimeSeconds *float64          `json:"max_runtime_seconds,omitempty" jsonschema:"seconds after which the job is killed; default and maximum are the host's (1 hour unless configured)"`
}

type idParams struct {
	ID string `json:"id" jsonschema:"the job id job_start returned (job_list lists them)"`
}

type statusParams struct {
	ID           string `json:"id" jsonschema:"the job id job_start returned (job_list lists them)"`
	StdoutOffset int64  `json:"stdout_offset,omitempty" jsonschema:"byte offset to read stdout from: the previous answer's stdout.next, to get only new output (default 0)"`
	StderrOffset int64  `json:"stderr_offset,omitempty" jsonschema:"byte offset to read stderr from: the previous answer's stderr.next (default 0)"`
}

type emptyParams struct{}

// listResult is job_list's value.
type listResult struct {
	Jobs []pdk.JobInfo `json:"jobs"`
}

func init() {
	pdk.Declare("jobs", "1.0.0", pdk.CapJobs)
	pdk.Tool("job_start", "Start a command in the background in the workspace and return its job id at once. The job keeps running after this call; poll it with job_status, stop it with job_cancel. It is killed at its max runtime and when the session ends.",
		start, pdk.Returns[pdk.JobInfo](), pdk.Destructive(true), pdk.OpenWorld(true), pdk.Title("Start a background job"))
	pdk.Tool("job_status", "Report a background job's state (running, exited, timed_out, cancelled, lost: it ended with its container, stopped or removed, and the note says when), exit code, and its output from the given byte offsets on. Pass the previous answer's next offsets to get only new output. Long output keeps its beginning and end; skipped says how many bytes in between were dropped.",
		status, pdk.Returns[pdk.JobStatus](), pdk.ReadOnly(), pdk.Title("Poll a background job"))
	pdk.Tool("job_cancel", "Stop a running background job and every process it started. A job that already ended is left as it was.",
		cancel, pdk.Returns[pdk.JobInfo](), pdk.Destructive(true), pdk.Idempotent(), pdk.Title("Cancel a background job"))
	pdk.Tool("job_list", "List this session's background jobs, running and ended, oldest first.",
		list, pdk.Returns[listResult](), pdk.ReadOnly(), pdk.Title("List background jobs"))
}

func start(_ *pdk.Call, p startParams) (pdk.Result, error) {
	if len(p.Command) == 0 || p.Command[0] == "" {
		return pdk.Result{}, pdk.Errorf(pdk.KindInvalid, "command is empty: give the program and its arguments, e.g. [\"make\", \"test\"]")
	}
	var runtime time.Duration
	if p.MaxRuntimeSeconds != nil {
		s := *p.MaxRuntimeSeconds
		if math.IsNaN(s) || s <= 0 {
			return pdk.Result{}, pdk.Errorf(pdk.KindInvalid, "max_runtime_seconds must be a positive number of seconds")
		}
		runtime = time.Duration(min(s, 1e6) * float64(time.Second))
	}
	env := map[string]string{}
	for k, v := range p.Env {
		env[strings.ToUpper(k)] = v
	}
	info, err := pdk.Jobs.Start(pdk.JobRequest{Argv: p.Command, Cwd: p.Cwd, Env: env, MaxRuntime: runtime})
	if err != nil {
		return pdk.Result{}, err
	}
	return pdk.OK("Started job "+info.ID+" ("+strings.Join(info.Command, " ")+"); poll it with job_status."+runtimeNote(p.MaxRuntimeSeconds, info), info), nil
}

// runtimeNote says the job runs for less than max_runtime_seconds asked,
// since the host caps it at its job_max_runtime, or is "" when it got what
// it asked: a model that asked for 60 s and saw its job killed at 8 s
// could not tell why.
func runtimeNote(asked *float64, info pdk.JobInfo) string {
	if asked == nil || float64(info.MaxRuntimeMS) >= math.Floor(*asked*1000) {
		return ""
	}
	got := time.Duration(info.MaxRuntimeMS) * time.Millisecond
	return " max_runtime_seconds " + strconv.FormatFloat(*asked, 'g', -1, 64) + " is over the host's maximum (job_max_runtime), so the job is killed after " +
		shellfmt.Seconds(got) + " s; split longer work, or ask the operator to raise the limit."
}

func status(_ *pdk.Call, p statusParams) (pdk.Result, error) {
	if p.StdoutOffset < 0 || p.StderrOffset < 0 {
		return pdk.Result{}, pdk.Errorf(pdk.KindInvalid, "offsets must not be negative")
	}
	st, err := pdk.Jobs.Status(p.ID, p.StdoutOffset, p.StderrOffset)
	if err != nil {
		return pdk.Result{}, err
	}
	return pdk.OK(describe(st), st), nil
}

func describe(st pdk.JobStatus) string {
	var b strings.Builder
	b.WriteString("Job " + st.ID + " is " + st.State)
	if st.State != "running" {
		b.WriteString(" (exit code " + strconv.Itoa(st.ExitCode) + ")")
	}
	b.WriteString(".\n")
	if st.Note != "" {
		b.WriteString("Why: " + st.Note + ".\n")
	}
	for _, s := range []struct {
		name string
		out  pdk.JobOutput
	}{{"stdout", st.Stdout}, {"stderr", st.Stderr}} {
		b.WriteString(s.name + " (bytes " + strconv.FormatInt(s.out.Offset, 10) + "-" + strconv.FormatInt(s.out.Next, 10) +
			" of " + strconv.FormatInt(s.out.Total, 10))
		if s.out.Skipped > 0 {
			b.WriteString(", " + shellfmt.Dropped(s.out.Skipped))
		}
		if s.out.More {
			b.WriteString(", more after: ask again from " + strconv.FormatInt(s.out.Next, 10))
		}
		b.WriteString("):\n" + s.out.Text)
		if s.out.Text != "" && !strings.HasSuffix(s.out.Text, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

func cancel(_ *pdk.Call, p idParams) (pdk.Result, error) {
	info, err := pdk.Jobs.Cancel(p.ID)
	if err != nil {
		return pdk.Result{}, err
	}
	return pdk.OK("Job "+info.ID+" is "+info.State+" (exit code "+strconv.Itoa(info.ExitCode)+").", info), nil
}

func list(_ *pdk.Call, _ emptyParams) (pdk.Result, error) {
	jobs, err := pdk.Jobs.List()
	if err != nil {
		return pdk.Result{}, err
	}
	if jobs == nil {
		jobs = []pdk.JobInfo{}
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(jobs)) + " job(s).\n")
	for _, j := range jobs {
		b.WriteString(j.ID + " " + j.State + " " + strings.Join(j.Command, " ") + "\n")
		if j.Note != "" {
			b.WriteString("  (" + j.Note + ")\n")
		}
	}
	return pdk.OK(b.String(), listResult{Jobs: jobs}), nil
}

func main() {}
