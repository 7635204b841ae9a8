package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/shellfmt"
)

// job is a background job of a container (host.ContainerJob on the wire).
type job struct {
	ID           string     `json:"id"`
	Container    string     `json:"container"`
	Command      []string   `json:"command"`
	State        string     `json:"state"`
	ExitCode     int        `json:"exit_code"`
	Signal       int        `json:"signal,omitempty"`
	MaxRuntimeMS int64      `json:"max_runtime_ms"`
	Stdout       *jobStream `json:"stdout,omitempty"`
	Stderr       *jobStream `json:"stderr,omitempty"`
}

type jobStream struct {
	Text    string `json:"text"`
	Offset  int64  `json:"offset"`
	Skipped int64  `json:"skipped,omitempty"`
	Next    int64  `json:"next"`
	More    bool   `json:"more,omitempty"`
	Total   int64  `json:"total"`
}

// jobAnswer tells the model where the job is and what to do next: poll
// again (from the offsets given) while it runs, read how it ended once
// it has. A job that ended badly is still a successful poll: the call did
// what it was asked.
func jobAnswer(p params, r response) pdk.Result {
	j := r.Job
	again := fmt.Sprintf("operation exec_poll, container %q, job_id %q", j.Container, j.ID)
	switch p.Operation {
	case "exec_background":
		msg := fmt.Sprintf("Started job %s in %s (%s), max runtime %ds.", j.ID, j.Container, strings.Join(j.Command, " "), j.MaxRuntimeMS/1000)
		if j.State != "running" {
			msg = fmt.Sprintf("Job %s in %s %s at once.", j.ID, j.Container, ended(j))
		}
		return pdk.OK(msg+"\nPoll it with "+again+"; stop it with exec_cancel.", r)
	case "exec_cancel":
		if j.State == "cancelled" {
			return pdk.OK(fmt.Sprintf("Cancelled job %s in %s: it and every process it started are gone.", j.ID, j.Container), r)
		}
		return pdk.OK(fmt.Sprintf("Job %s in %s had already ended: it %s.", j.ID, j.Container, ended(j)), r)
	}
	var b strings.Builder
	if j.State == "running" {
		fmt.Fprintf(&b, "Job %s in %s is still running.", j.ID, j.Container)
	} else {
		fmt.Fprintf(&b, "Job %s in %s %s.", j.ID, j.Container, ended(j))
	}
	for _, s := range []struct {
		name string
		out  *jobStream
	}{{"stdout", j.Stdout}, {"stderr", j.Stderr}} {
		if s.out == nil {
			continue
		}
		fmt.Fprintf(&b, "\n%s (bytes %d-%d of %d", s.name, s.out.Offset, s.out.Next, s.out.Total)
		if s.out.Skipped > 0 {
			b.WriteString(", " + shellfmt.Dropped(s.out.Skipped))
		}
		b.WriteString("):\n" + shellfmt.Bytes(s.out.Text, outputBytes))
		if s.out.Text != "" && !strings.HasSuffix(s.out.Text, "\n") {
			b.WriteString("\n")
		}
	}
	next := func(s *jobStream) int64 {
		if s == nil {
			return 0
		}
		return s.Next
	}
	more := j.Stdout != nil && j.Stdout.More || j.Stderr != nil && j.Stderr.More
	switch {
	case j.State == "running" || more:
		fmt.Fprintf(&b, "\nPoll again later with %s, stdout_offset %d, stderr_offset %d, to get only new output.",
			again, next(j.Stdout), next(j.Stderr))
	default:
		b.WriteString("\nThe job is over: nothing more will come.")
	}
	return pdk.OK(b.String(), r)
}

// ended says how a job that is not running ended.
func ended(j *job) string {
	switch j.State {
	case "exited":
		return "ended with exit code " + strconv.Itoa(j.ExitCode)
	case "timed_out":
		return "was killed at its max runtime (exit code " + strconv.Itoa(j.ExitCode) + ")"
	case "cancelled":
		return "was cancelled"
	case "lost":
		return "was lost (its supervisor died; its processes were killed)"
	case "running":
		return "still running"
	}
	return "is " + j.State
}

// jobLines lists a container's background jobs for status: the ids
// exec_poll and exec_cancel take.
func jobLines(jobs []job) string {
	if len(jobs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nBackground jobs (poll with exec_poll and the job_id):")
	for _, j := range jobs {
		state := "running"
		if j.State != "running" {
			state = ended(&j)
		}
		fmt.Fprintf(&b, "\n- %s: %s (%s)", j.ID, strings.Join(j.Command, " "), state)
	}
	return b.String()
}
