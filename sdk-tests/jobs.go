package sdktests

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// RunJobs runs the background-job conformance suite (backend.JobRunner)
// against b, whose Caps.Jobs must be set.
func RunJobs(t *testing.T, b Backend) {
	t.Helper()
	s := newSuite(t, b)
	s.run(t, []check{
		{name: "JobRunsPollsAndCompletes", needs: needJobs, fn: checkJobLifecycle},
		{name: "JobOutputKeepsHeadAndTail", needs: needJobs, fn: checkJobOutputBounded,
			limits: func(l *backend.Limits) { l.MaxOutputBytes = 1024 }},
		{name: "JobTimesOutAtMaxRuntime", needs: needJobs, fn: checkJobTimeout},
		{name: "JobCancelKillsProcessTree", needs: needJobs, fn: checkJobCancel},
		{name: "JobListAndUnknownIDs", needs: needJobs, fresh: true, fn: checkJobList},
		{name: "JobRefusedOverLimits", needs: needJobs, fn: checkJobLimits},
		{name: "JobKilledWhenTheSessionCloses", needs: needJobs, fn: checkJobKilledWithSession},
		{name: "JobSurvivesAReopenOfAKeptSession", needs: needJobs | needReopen, fn: checkJobSurvivesReopen},
	})
}

func runner(t *T, wsp backend.Workspace) backend.JobRunner {
	t.Helper()
	jr, ok := wsp.(backend.JobRunner)
	if !ok {
		t.Fatalf("the workspace (%T) does not implement backend.JobRunner, but Caps.Jobs is set", wsp)
	}
	return jr
}

// waitJob polls job id until done says so, returning the last status and
// all the output read, offset after offset.
func waitJob(t *T, jr backend.JobRunner, id string, done func(backend.JobStatus, string) bool) (backend.JobStatus, string) {
	t.Helper()
	var off backend.JobOffsets
	var out strings.Builder
	for {
		st, err := jr.JobStatus(t.Context(), id, off)
		if err != nil {
			t.Fatalf("JobStatus(%s): %v", id, err)
		}
		if st.Stdout.Offset != off.Stdout && st.Stdout.Skipped == 0 {
			t.Errorf("JobStatus from offset %d answered offset %d without skipping", off.Stdout, st.Stdout.Offset)
		}
		out.WriteString(st.Stdout.Text)
		off = backend.JobOffsets{Stdout: st.Stdout.Next, Stderr: st.Stderr.Next}
		if done(st, out.String()) {
			return st, out.String()
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("job %s: gave up waiting (state %s, output %q)", id, st.State, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func ended(st backend.JobStatus, _ string) bool { return !st.Running() }

// A job runs past StartJob, its output is read as it comes from an offset,
// and it completes with its exit code once a file the check creates lets
// it go on.
func checkJobLifecycle(t *T, w *ws) {
	jr := runner(t, w.Workspace)
	info, err := jr.StartJob(t.Context(), backend.JobRequest{
		Shell: "echo first; echo err >&2; while [ ! -e gate ]; do sleep 0.05; done; echo second; exit 3", Cwd: w.p("")})
	if err != nil {
		t.Fatalf("StartJob: %v", err)
	}
	if info.ID == "" || info.State != backend.JobRunning || info.StartedAt.IsZero() {
		t.Errorf("StartJob: %+v, want an id, running, a start time", info)
	}
	st, _ := waitJob(t, jr, info.ID, func(_ backend.JobStatus, out string) bool { return strings.Contains(out, "first\n") })
	if !st.Running() {
		t.Fatalf("job ended (%s) while waiting for a file nobody had created", st.State)
	}
	first := st.Stdout.Next
	w.write("gate", "")
	st, _ = waitJob(t, jr, info.ID, ended)
	if st.State != backend.JobExited || st.ExitCode != 3 || st.EndedAt.IsZero() {
		t.Errorf("ended job: state %s exit %d ended %v, want exited, 3", st.State, st.ExitCode, st.EndedAt)
	}
	rest, err := jr.JobStatus(t.Context(), info.ID, backend.JobOffsets{Stdout: first})
	if err != nil || rest.Stdout.Text != "second\n" {
		t.Errorf("output since offset %d: %q (%v), want %q", first, rest.Stdout.Text, err, "second\n")
	}
	all, _ := jr.JobStatus(t.Context(), info.ID, backend.JobOffsets{})
	if all.Stdout.Text != "first\nsecond\n" || all.Stderr.Text != "err\n" || all.Stdout.Total != 13 {
		t.Errorf("whole output: stdout %q stderr %q total %d", all.Stdout.Text, all.Stderr.Text, all.Stdout.Total)
	}
}

// A job printing far more than its budget keeps a bounded head and tail.
func checkJobOutputBounded(t *T, w *ws) {
	jr := runner(t, w.Workspace)
	const n = 1 << 20
	info, err := jr.StartJob(t.Context(), backend.JobRequest{
		Shell: "echo HEAD; head -c 1048576 /dev/zero | tr '\\0' x; echo; echo TAIL", Cwd: w.p("")})
	if err != nil {
		t.Fatalf("StartJob: %v", err)
	}
	st, _ := waitJob(t, jr, info.ID, ended)
	if st.Stdout.Total != n+11 {
		t.Errorf("total %d bytes, want %d", st.Stdout.Total, n+11)
	}
	var off int64
	var read, skipped int64
	var text strings.Builder
	for range 1000 {
		st, err := jr.JobStatus(t.Context(), info.ID, backend.JobOffsets{Stdout: off})
		if err != nil {
			t.Fatalf("JobStatus: %v", err)
		}
		if len(st.Stdout.Text) > w.limits.MaxOutputBytes {
			t.Fatalf("one answer holds %d bytes, over MaxOutputBytes %d", len(st.Stdout.Text), w.limits.MaxOutputBytes)
		}
		read += int64(len(st.Stdout.Text))
		skipped += st.Stdout.Skipped
		text.WriteString(st.Stdout.Text)
		off = st.Stdout.Next
		if !st.Stdout.More {
			break
		}
	}
	if off != st.Stdout.Total || skipped == 0 || read+skipped != st.Stdout.Total {
		t.Errorf("reading it all: ended at %d of %d, read %d, skipped %d", off, st.Stdout.Total, read, skipped)
	}
	if read > 64*int64(w.limits.MaxOutputBytes) {
		t.Errorf("kept %d bytes of a 1 MiB stream: the buffer is not bounded", read)
	}
	if s := text.String(); !strings.HasPrefix(s, "HEAD\n") || !strings.HasSuffix(s, "\nTAIL\n") {
		t.Errorf("head and tail not kept: %q … %q", s[:min(len(s), 10)], s[max(0, len(s)-10):])
	}
}

func checkJobTimeout(t *T, w *ws) {
	jr := runner(t, w.Workspace)
	info, err := jr.StartJob(t.Context(), backend.JobRequest{Shell: "echo started; sleep 60", Cwd: w.p(""), MaxRuntime: time.Second})
	if err != nil {
		t.Fatalf("StartJob: %v", err)
	}
	st, out := waitJob(t, jr, info.ID, ended)
	if st.State != backend.JobTimedOut || st.ExitCode != backend.TimeoutExitCode || st.Signal == 0 {
		t.Errorf("job past its max runtime: state %s exit %d signal %d, want timed_out, 124, a signal", st.State, st.ExitCode, st.Signal)
	}
	if out != "started\n" {
		t.Errorf("timed-out job's output %q", out)
	}
}

func checkJobCancel(t *T, w *ws) {
	jr := runner(t, w.Workspace)
	m := sleepMarker()
	info, err := jr.StartJob(t.Context(), backend.JobRequest{Shell: "sleep " + m + " & sleep " + m + "; echo never", Cwd: w.p("")})
	if err != nil {
		t.Fatalf("StartJob: %v", err)
	}
	for len(processesWith(t, w, m)) < 2 {
		select {
		case <-t.Context().Done():
			t.Fatalf("the job's sleeps never showed up")
		case <-time.After(50 * time.Millisecond):
		}
	}
	got, err := jr.CancelJob(t.Context(), info.ID)
	if err != nil || got.State != backend.JobCancelled || got.Signal == 0 {
		t.Errorf("CancelJob: state %s signal %d err %v, want cancelled with a signal", got.State, got.Signal, err)
	}
	noProcessesLeft(t, w, m, "a cancelled job")
	again, err := jr.CancelJob(t.Context(), info.ID)
	if err != nil || again.State != backend.JobCancelled {
		t.Errorf("cancelling an ended job again: %s, %v; want it left as it was", again.State, err)
	}
}

func checkJobList(t *T, w *ws) {
	jr := runner(t, w.Workspace)
	if l, err := jr.ListJobs(t.Context()); err != nil || len(l) != 0 {
		t.Fatalf("a fresh workspace's jobs: %v, %v; want none", l, err)
	}
	a, err1 := jr.StartJob(t.Context(), backend.JobRequest{Argv: []string{"true"}})
	time.Sleep(10 * time.Millisecond) // distinct start times order the list
	b, err2 := jr.StartJob(t.Context(), backend.JobRequest{Argv: []string{"sleep", "60"}})
	if err := errors.Join(err1, err2); err != nil {
		t.Fatalf("StartJob: %v", err)
	}
	l, err := jr.ListJobs(t.Context())
	if err != nil || len(l) != 2 || l[0].ID != a.ID || l[1].ID != b.ID {
		t.Fatalf("ListJobs: %+v, %v; want %s then %s", l, err, a.ID, b.ID)
	}
	if _, err := jr.CancelJob(t.Context(), b.ID); err != nil {
		t.Errorf("CancelJob: %v", err)
	}
	for _, id := range []string{"nope", "j000000000000", "../x"} {
		if _, err := jr.JobStatus(t.Context(), id, backend.JobOffsets{}); !errors.Is(err, backend.ErrNotFound) {
			t.Errorf("JobStatus(%q): %v, want ErrNotFound", id, err)
		}
	}
	nf, err := jr.StartJob(t.Context(), backend.JobRequest{Argv: []string{"nonexistent_command_12345"}})
	if err == nil {
		st, _ := waitJob(t, jr, nf.ID, ended)
		if st.ExitCode != 127 {
			t.Errorf("a job of a missing command: exit %d, want 127", st.ExitCode)
		}
	} else if !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("a job of a missing command: %v, want a job exiting 127 or ErrInvalid", err)
	}
}

func checkJobLimits(t *T, w *ws) {
	jr := runner(t, w.Workspace)
	for name, req := range map[string]backend.JobRequest{
		"no command":       {},
		"both":             {Argv: []string{"true"}, Shell: "true"},
		"negative runtime": {Argv: []string{"true"}, MaxRuntime: -time.Second},
		"long command":     {Shell: strings.Repeat("x", w.limits.MaxCommandBytes+1)},
	} {
		if _, err := jr.StartJob(t.Context(), req); !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("StartJob(%s): %v, want ErrInvalid", name, err)
		}
	}
}

// Closing a session that is not kept kills its jobs.
func checkJobKilledWithSession(t *T, w *ws) {
	m := sleepMarker()
	other := w.b.Open(t.t, backend.DefaultLimits())
	jr := runner(t, other)
	if _, err := jr.StartJob(t.Context(), backend.JobRequest{Shell: "sleep " + m + " & sleep " + m}); err != nil {
		t.Fatalf("StartJob: %v", err)
	}
	seen := func() []string { return processesWith(t, w, m) }
	if w.b.Caps.Sandboxed { // the other session's processes are not w's to see
		seen = func() []string { return hostProcessesWith(m) }
	}
	for len(seen()) < 2 {
		select {
		case <-t.Context().Done():
			t.Fatalf("the job's sleeps never showed up")
		case <-time.After(50 * time.Millisecond):
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := other.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if w.b.Caps.Sandboxed {
		if procs := seen(); len(procs) > 0 {
			t.Errorf("closing the session left processes behind:\n%s", strings.Join(procs, "\n"))
		}
		return
	}
	noProcessesLeft(t, w, m, "closing the session")
}

// A kept session's job outlives the Backend that started it, and is
// polled through another one.
func checkJobSurvivesReopen(t *T, w *ws) {
	session := "jobs-reopen-" + strings.TrimPrefix(sleepMarker(), "91.")
	first := w.b.Caps.Reopen(t.t, session)
	info, err := runner(t, first).StartJob(t.Context(), backend.JobRequest{
		Shell: "echo one; while [ ! -e gate ]; do sleep 0.05; done; echo two"})
	if err != nil {
		t.Fatalf("StartJob: %v", err)
	}
	if err := first.Close(t.Context()); err != nil {
		t.Fatalf("closing the kept session: %v", err)
	}
	second := w.b.Caps.Reopen(t.t, session)
	jr := runner(t, second)
	st, _ := waitJob(t, jr, info.ID, func(_ backend.JobStatus, out string) bool { return strings.Contains(out, "one\n") })
	if !st.Running() {
		t.Fatalf("the job of a kept session did not survive its Backend: %s", st.State)
	}
	if _, err := second.FS().Write(t.Context(), backend.WriteRequest{Path: "gate", Mode: backend.WriteOverwrite}); err != nil {
		t.Fatalf("writing the gate: %v", err)
	}
	st, out := waitJob(t, jr, info.ID, ended)
	if st.State != backend.JobExited || st.ExitCode != 0 || out != "one\ntwo\n" {
		t.Errorf("reopened job: %s exit %d output %q", st.State, st.ExitCode, out)
	}
}
