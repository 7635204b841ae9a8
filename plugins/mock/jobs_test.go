package mock_test

import (
	"errors"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/plugins/mock"
)

func TestJobsAnswerCannedResults(t *testing.T) {
	b := mock.New(mock.Options{})
	ws := open(t, b, "s")
	ws.MockShell().AddResponse("make", backend.ExecResult{ExitCode: 2, Stdout: "building\n", Stderr: "oops\n"})
	info, err := ws.StartJob(t.Context(), backend.JobRequest{Shell: "make all"})
	if err != nil || info.State != backend.JobExited || info.ExitCode != 2 {
		t.Fatalf("StartJob: %+v %v, want exited 2 at once", info, err)
	}
	st, err := ws.JobStatus(t.Context(), info.ID, backend.JobOffsets{Stdout: 3})
	if err != nil || st.Stdout.Text != "lding\n" || st.Stderr.Text != "oops\n" || st.Stdout.Next != 9 {
		t.Errorf("JobStatus from 3: %+v %v", st, err)
	}

	ws.HoldJobs(true)
	held, _ := ws.StartJob(t.Context(), backend.JobRequest{Argv: []string{"sleep", "9"}})
	other, _ := ws.StartJob(t.Context(), backend.JobRequest{Argv: []string{"make"}})
	if held.State != backend.JobRunning {
		t.Fatalf("held job: %s", held.State)
	}
	if got, err := ws.CancelJob(t.Context(), held.ID); err != nil || got.State != backend.JobCancelled || got.Signal == 0 {
		t.Errorf("CancelJob: %+v %v", got, err)
	}
	ws.FinishJobs()
	if st, _ := ws.JobStatus(t.Context(), other.ID, backend.JobOffsets{}); st.State != backend.JobExited || st.ExitCode != 2 {
		t.Errorf("finished job: %s %d", st.State, st.ExitCode)
	}
	if l, _ := ws.ListJobs(t.Context()); len(l) != 3 || l[0].ID != info.ID {
		t.Errorf("ListJobs: %+v", l)
	}
	if _, err := ws.JobStatus(t.Context(), "nope", backend.JobOffsets{}); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := ws.StartJob(t.Context(), backend.JobRequest{}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("empty request: %v", err)
	}

	// A session that closes cancels its running jobs; a kept one keeps them.
	running, _ := ws.StartJob(t.Context(), backend.JobRequest{Argv: []string{"sleep", "9"}})
	if err := ws.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	again := open(t, b, "s")
	if l, _ := again.ListJobs(t.Context()); len(l) != 0 {
		t.Errorf("a closed session's jobs came back: %+v (job %s)", l, running.ID)
	}
	kept, err := b.Open(t.Context(), backend.WorkspaceSpec{Session: "k", Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	kws := kept.(*mock.Workspace)
	kws.HoldJobs(true)
	kj, _ := kws.StartJob(t.Context(), backend.JobRequest{Argv: []string{"sleep", "9"}})
	_ = kws.Close(t.Context())
	reopened := open(t, b, "k")
	if st, err := reopened.JobStatus(t.Context(), kj.ID, backend.JobOffsets{}); err != nil || st.State != backend.JobRunning {
		t.Errorf("kept session's job after reopening: %+v %v", st, err)
	}
}
