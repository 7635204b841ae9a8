package host

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// A session's background jobs run in its workspace's sandbox, so what
// stops the sandbox ends them, and a backend forgets them with it (a
// container's job records go with the container). The kernel therefore
// (1) never counts a session whose jobs run as idle, and (2) keeps a book
// of the session's jobs (session_jobbook.go), reporting one its backend
// forgot as lost, with why and when, instead of "no such job": for every
// backend, in one place.

// openWorkspace is the session's workspace if it was opened, else nil: what
// asks about jobs for idleness must not open (or start) anything.
func (s *Session) openWorkspace() backend.Workspace {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ws
}

// runningJobsOf lists the jobs running in ws without starting its sandbox
// (backend.RunningJobLister), else by ListJobs; none when ws runs no jobs.
func runningJobsOf(ctx context.Context, ws any) ([]backend.JobInfo, error) {
	var jobs []backend.JobInfo
	var err error
	switch w := ws.(type) {
	case backend.RunningJobLister:
		return w.RunningJobs(ctx)
	case backend.JobRunner:
		jobs, err = w.ListJobs(ctx)
	}
	return slices.DeleteFunc(jobs, func(j backend.JobInfo) bool { return !j.Running() }), err
}

// RunningJobs reports how many background jobs run in the session's
// workspace now, without opening or starting anything (0 before the
// workspace is opened). An MCP server does not close a session with
// running jobs as idle; an error means the count is unknown.
func (s *Session) RunningJobs(ctx context.Context) (int, error) {
	ws := s.openWorkspace()
	if ws == nil {
		return 0, nil
	}
	jobs, err := runningJobsOf(ctx, ws)
	return len(jobs), err
}

// jobsKeepBusy reports whether ws runs background jobs, for the idle
// release: a running job is use. A workspace that cannot say counts as
// running them: the next sweep asks again, and releasing would kill what
// it could not see.
func (s *Session) jobsKeepBusy(ctx context.Context, ws backend.Workspace) bool {
	jobs, err := runningJobsOf(ctx, ws)
	if err != nil {
		s.k.log.LogAttrs(ctx, slog.LevelWarn, "session.idle_jobs_unknown", slog.String("session", s.Name()), slog.String("error", err.Error()))
		return true
	}
	if len(jobs) == 0 {
		return false
	}
	s.k.log.LogAttrs(ctx, slog.LevelDebug, "session.idle_jobs_run", slog.String("session", s.Name()), slog.Int("jobs", len(jobs)))
	return true
}

// stopEndingJobs stops lc (the session's workspace) and records the jobs
// running in it as lost: the stop ends them and the backend forgets them.
// No job starts meanwhile (the jobs' start lock), so the count is the
// count ended, which the returned state carries.
func (s *Session) stopEndingJobs(lc backend.Lifecycle, ctx context.Context) (backend.LifecycleState, error) {
	s.jobs.start.Lock()
	defer s.jobs.start.Unlock()
	jobs, jerr := runningJobsOf(ctx, lc)
	if jerr != nil {
		// The stop goes ahead (it was asked for); only the record is missing.
		s.k.log.LogAttrs(ctx, slog.LevelWarn, "session.stop_jobs_unknown", slog.String("session", s.Name()), slog.String("error", jerr.Error()))
	}
	st, err := lc.Stop(ctx)
	if err != nil {
		return st, err
	}
	s.book.ended(jobs, time.Now())
	st.JobsEnded = len(jobs)
	return st, nil
}
