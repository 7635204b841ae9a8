package host_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/plugins/mock"
)

// stoppableBackend is the mock with a sandbox to stop, as a container
// backend has: a Stop ends the jobs running in it and forgets them, as
// removing a container does, so a later status of one is ErrNotFound.
type stoppableBackend struct {
	*mock.Backend
	mu    sync.Mutex
	stops int
	gone  map[string]bool // jobs the sandbox's removal took
}

func (b *stoppableBackend) Open(ctx context.Context, spec backend.WorkspaceSpec) (backend.Workspace, error) {
	ws, err := b.Backend.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &stoppableWorkspace{Workspace: ws.(*mock.Workspace), b: b}, nil
}

func (b *stoppableBackend) stopCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stops
}

type stoppableWorkspace struct {
	*mock.Workspace
	b *stoppableBackend
}

func (w *stoppableWorkspace) Start(context.Context) (backend.LifecycleState, error) {
	return backend.LifecycleState{Name: "sandbox", Running: true}, nil
}

func (w *stoppableWorkspace) State(context.Context) (backend.LifecycleState, error) {
	return backend.LifecycleState{Name: "sandbox"}, nil
}

func (w *stoppableWorkspace) Stop(ctx context.Context) (backend.LifecycleState, error) {
	jobs, err := w.Workspace.ListJobs(ctx)
	if err != nil {
		return backend.LifecycleState{}, err
	}
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	for _, j := range jobs {
		_, _ = w.Workspace.CancelJob(ctx, j.ID)
		w.b.gone[j.ID] = true
	}
	w.b.stops++
	return backend.LifecycleState{Name: "sandbox"}, nil
}

func (w *stoppableWorkspace) forgotten(op, id string) error {
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	if w.b.gone[id] {
		return backend.Errorf(backend.ErrNotFound, op, id, "no such job in this session (list them with job_list)")
	}
	return nil
}

func (w *stoppableWorkspace) JobStatus(ctx context.Context, id string, since backend.JobOffsets) (backend.JobStatus, error) {
	if err := w.forgotten("job.status", id); err != nil {
		return backend.JobStatus{}, err
	}
	return w.Workspace.JobStatus(ctx, id, since)
}

func (w *stoppableWorkspace) CancelJob(ctx context.Context, id string) (backend.JobInfo, error) {
	if err := w.forgotten("job.cancel", id); err != nil {
		return backend.JobInfo{}, err
	}
	return w.Workspace.CancelJob(ctx, id)
}

func (w *stoppableWorkspace) ListJobs(ctx context.Context) ([]backend.JobInfo, error) {
	jobs, err := w.Workspace.ListJobs(ctx)
	var kept []backend.JobInfo
	for _, j := range jobs {
		if w.forgotten("job.list", j.ID) == nil {
			kept = append(kept, j)
		}
	}
	return kept, err
}

// Interface guards
var (
	_ backend.Lifecycle = (*stoppableWorkspace)(nil)
	_ backend.JobRunner = (*stoppableWorkspace)(nil)
)

// stoppableSession opens a session on a stoppable mock whose new jobs stay
// running, with its workspace opened.
func stoppableSession(t *testing.T, idle time.Duration) (*host.Session, *stoppableBackend, *mock.Workspace, *eventWaiter) {
	t.Helper()
	cfg := host.DefaultConfig()
	cfg.StateDir = t.TempDir()
	cfg.BundledTools = []string{}
	cfg.Backend = "mock"
	cfg.SessionIdleTimeout = idle
	b := &stoppableBackend{Backend: mock.New(mock.Options{}), gone: map[string]bool{}}
	ev := newEventWaiter()
	s := openSession(t, startKernel(t, cfg, host.WithBackend(b), host.WithLogger(slog.New(ev))), "jobs")
	if _, err := s.Shell().Execute(t.Context(), backend.ExecRequest{Argv: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	ws, ok := b.Workspace("jobs")
	if !ok {
		t.Fatal("no mock workspace for the session")
	}
	ws.HoldJobs(true)
	return s, b, ws, ev
}

// The kernel's idle release stops a session's sandbox, which would end
// its background jobs: a running job is use, so the session is not
// released while one runs, and is once the last one ended (finding 1 of
// the s26 trial: session_idle_timeout removed a container with its jobs).
func TestIdleReleaseSparesRunningJobs(t *testing.T) {
	s, b, ws, ev := stoppableSession(t, 30*time.Millisecond)
	ctx := t.Context()
	job, err := s.Jobs().StartJob(ctx, backend.JobRequest{Argv: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	// A sweep found the session idle: it either spared it for its job
	// (session.idle_jobs_run) or released it (session.idle_release).
	ev.wait(t, "session.idle", s.Name())
	if n := b.stopCount(); n != 0 {
		t.Fatalf("the idle release stopped the sandbox %d time(s) while a job ran", n)
	}
	if st, err := s.Jobs().JobStatus(ctx, job.ID, backend.JobOffsets{}); err != nil || !st.Running() {
		t.Fatalf("job after idle sweeps: %+v, %v; want it running", st.JobInfo, err)
	}
	ws.FinishJobs()
	ev.wait(t, "session.idle_release", s.Name())
	if n := b.stopCount(); n != 1 {
		t.Errorf("after the job ended the idle session was stopped %d time(s), want 1", n)
	}
}

// A stop of the sandbox ends the jobs running in it and the backend
// forgets them; the kernel reports them as lost, saying why and when,
// rather than "no such job", and the stop says how many it ended
// (finding 3 of the s26 trial). A job seen ended before keeps how it ended.
func TestStopReportsEndedJobsAsLost(t *testing.T) {
	s, _, _, _ := stoppableSession(t, 0)
	ctx := t.Context()
	running, ended := startTwoJobs(t, s)
	st, err := s.Lifecycle().Stop(ctx)
	if err != nil || st.JobsEnded != 1 {
		t.Fatalf("stop: %+v, %v; want 1 job ended (the cancelled one had ended already)", st, err)
	}
	got, err := s.Jobs().JobStatus(ctx, running.ID, backend.JobOffsets{})
	if err != nil || got.State != backend.JobLost || got.EndedAt.IsZero() || !strings.Contains(got.Note, "stopped at") {
		t.Fatalf("status of a job the stop ended: %+v, %v; want lost, with when and why", got.JobInfo, err)
	}
	if c, err := s.Jobs().CancelJob(ctx, running.ID); err != nil || c.State != backend.JobLost {
		t.Errorf("cancelling a lost job: %+v, %v; want it left as it was", c, err)
	}
	checkForgotten(t, s, running.ID, ended.ID)
}

// A backend that forgets a session's jobs by itself (a container removed
// by the backend's own idle or max_uptime cleanup, or one that died and
// was recreated) does not make them "no such job" either: a job last seen
// running is lost, found gone, with when.
func TestForgottenJobsAreLost(t *testing.T) {
	s, b, _, _ := stoppableSession(t, 0)
	ctx := t.Context()
	running, ended := startTwoJobs(t, s)
	ws, err := b.Open(ctx, backend.WorkspaceSpec{Session: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.(backend.Lifecycle).Stop(ctx); err != nil { // behind the kernel's back
		t.Fatal(err)
	}
	got, err := s.Jobs().JobStatus(ctx, running.ID, backend.JobOffsets{})
	if err != nil || got.State != backend.JobLost || !strings.Contains(got.Note, "found gone at") {
		t.Fatalf("status of a job its backend forgot: %+v, %v; want lost, found gone", got.JobInfo, err)
	}
	checkForgotten(t, s, running.ID, ended.ID)
	if _, err := s.Jobs().JobStatus(ctx, "j000000000000", backend.JobOffsets{}); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("a job the session never had: %v, want not found", err)
	}
}

// startTwoJobs starts a job that keeps running and one cancelled at once.
func startTwoJobs(t *testing.T, s *host.Session) (running, ended backend.JobInfo) {
	t.Helper()
	ctx := t.Context()
	running, err := s.Jobs().StartJob(ctx, backend.JobRequest{Argv: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	if ended, err = s.Jobs().StartJob(ctx, backend.JobRequest{Argv: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	if ended, err = s.Jobs().CancelJob(ctx, ended.ID); err != nil || ended.State != backend.JobCancelled {
		t.Fatalf("cancel: %+v, %v", ended, err)
	}
	return running, ended
}

// checkForgotten checks what status and list say of two jobs the backend
// forgot: the running one lost, the ended one as it ended, with a note.
func checkForgotten(t *testing.T, s *host.Session, running, ended string) {
	t.Helper()
	ctx := t.Context()
	got, err := s.Jobs().JobStatus(ctx, ended, backend.JobOffsets{})
	if err != nil || got.State != backend.JobCancelled || !strings.Contains(got.Note, "how it ended") {
		t.Errorf("a job seen ended before its sandbox went: %+v, %v; want it cancelled, with a note", got.JobInfo, err)
	}
	list, err := s.Jobs().ListJobs(ctx)
	if err != nil || len(list) != 2 || list[0].ID != running || list[0].State != backend.JobLost || list[1].ID != ended || list[1].State != backend.JobCancelled {
		t.Errorf("job_list: %+v, %v; want the lost job, then the cancelled one", list, err)
	}
}
