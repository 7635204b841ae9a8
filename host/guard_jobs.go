package host

import (
	"context"
	"errors"
	"sync"

	"github.com/wai-dev/wai/host/backend"
)

// guardedJobs is a session's background jobs: a job is a command, so it
// takes the command's path (limits, then the policy chain, judged as a
// shell exec, since what runs is what matters), plus the kernel's own
// bounds: its runtime (default and cap from the config) and how many one
// session runs at once.
type guardedJobs struct {
	s     *Session
	start sync.Mutex // one start at a time: the count and the start agree
}

// Jobs returns the session's background jobs. Every call fails with
// ErrUnavailable on a backend without them.
func (s *Session) Jobs() backend.JobRunner { return s.jobs }

func (g *guardedJobs) runner(ctx context.Context, op string) (backend.JobRunner, bool, error) {
	ws, fellBack, err := g.s.workspace(ctx)
	if err != nil {
		return nil, false, err
	}
	jr, ok := ws.(backend.JobRunner)
	if !ok {
		return nil, false, backend.Errorf(backend.ErrUnavailable, op, "", "this session's backend runs no background jobs (the host and podman backends do)")
	}
	return jr, fellBack, nil
}

func (g *guardedJobs) StartJob(ctx context.Context, req backend.JobRequest) (backend.JobInfo, error) {
	const op = "job.start"
	s := g.s
	done, err := s.begin()
	if err != nil {
		return backend.JobInfo{}, err
	}
	defer done()
	if _, err := s.k.cfg.Limits.CheckExec(req.Exec()); err != nil {
		return backend.JobInfo{}, err
	}
	limit := s.k.cfg.JobMaxRuntime
	switch {
	case req.MaxRuntime < 0:
		return backend.JobInfo{}, backend.Errorf(backend.ErrInvalid, op, "", "max runtime %s is negative", req.MaxRuntime)
	case req.MaxRuntime == 0 || req.MaxRuntime > limit:
		req.MaxRuntime = limit // a caller can shorten it, never extend it
	}
	check := CheckRequest{Action: ActionShellExec, Command: req.Command(), Shell: req.Shell, Cwd: req.Cwd, EnvKeys: envKeys(req.Env)}
	if err := s.check(ctx, check); err != nil {
		return backend.JobInfo{}, err
	}
	jr, fellBack, err := g.runner(ctx, op)
	if err != nil {
		return backend.JobInfo{}, err
	}
	g.start.Lock()
	defer g.start.Unlock()
	if err := s.checkJobSlot(ctx, jr, op, "", "the session", "wait for one to end or cancel one (job_list shows them)"); err != nil {
		return backend.JobInfo{}, err
	}
	info, err := jr.StartJob(ctx, req)
	if fellBack {
		info.Sandboxed = false
	}
	if err == nil {
		s.book.seen(info)
	}
	s.k.log.Info("job.start", "session", s.spec.Session, "job", info.ID, "command", joinArgv(req.Command()),
		"tool", callTool(ctx), "error", errString(err))
	return info, err
}

// JobStatus, CancelJob and ListJobs answer a job the backend forgot with
// its sandbox (stopped, removed, recreated) from the session's book of its
// jobs: lost, with why and when. One a stop ended is answered without
// asking the backend, which would start a new sandbox to say it has none.
func (g *guardedJobs) JobStatus(ctx context.Context, id string, since backend.JobOffsets) (backend.JobStatus, error) {
	done, err := g.s.begin()
	if err != nil {
		return backend.JobStatus{}, err
	}
	defer done()
	if info, ok := g.s.book.gone(id); ok {
		return backend.JobStatus{JobInfo: info}, nil
	}
	jr, fellBack, err := g.runner(ctx, "job.status")
	if err != nil {
		return backend.JobStatus{}, err
	}
	st, err := jr.JobStatus(ctx, id, since)
	if fellBack {
		st.Sandboxed = false
	}
	if info, ok := g.forgotten(id, err); ok {
		return backend.JobStatus{JobInfo: info}, nil
	}
	if err == nil {
		g.s.book.seen(st.JobInfo)
	}
	return st, err
}

func (g *guardedJobs) CancelJob(ctx context.Context, id string) (backend.JobInfo, error) {
	done, err := g.s.begin()
	if err != nil {
		return backend.JobInfo{}, err
	}
	defer done()
	if info, ok := g.s.book.gone(id); ok {
		return info, nil // ended already: left as it was
	}
	jr, _, err := g.runner(ctx, "job.cancel")
	if err != nil {
		return backend.JobInfo{}, err
	}
	info, err := jr.CancelJob(ctx, id)
	if lost, ok := g.forgotten(id, err); ok {
		return lost, nil
	}
	if err == nil {
		g.s.book.seen(info)
	}
	return info, err
}

func (g *guardedJobs) ListJobs(ctx context.Context) ([]backend.JobInfo, error) {
	done, err := g.s.begin()
	if err != nil {
		return nil, err
	}
	defer done()
	jr, _, err := g.runner(ctx, "job.list")
	if err != nil {
		return nil, err
	}
	jobs, err := jr.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	g.s.book.seen(jobs...)
	return g.s.book.merge(jobs), nil
}

// forgotten is the book's lost record of a job the backend answered
// ErrNotFound for, when the session started it.
func (g *guardedJobs) forgotten(id string, err error) (backend.JobInfo, bool) {
	if !errors.Is(err, backend.ErrNotFound) {
		return backend.JobInfo{}, false
	}
	return g.s.book.forgotten(id)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Interface guards
var _ backend.JobRunner = (*guardedJobs)(nil)
