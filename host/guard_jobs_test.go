package host_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/plugins/mock"
)

// A job takes a command's path through the kernel: limits and the policy
// chain refuse it before the backend sees it, its runtime is clamped to
// the config's cap, and a session runs at most max_jobs at once.
func TestJobsPassTheKernelsGuard(t *testing.T) {
	cfg := host.DefaultConfig()
	cfg.StateDir = t.TempDir()
	cfg.BundledTools = []string{}
	cfg.Backend = "mock"
	cfg.MaxJobs = 2
	cfg.JobMaxRuntime = time.Minute
	m := mock.New(mock.Options{})
	s := openSession(t, startKernel(t, cfg, host.WithBackend(m)), "jobs")
	jobs := s.Jobs()
	ctx := t.Context()
	if _, err := jobs.StartJob(ctx, backend.JobRequest{Shell: "rm -rf /"}); !errors.Is(err, backend.ErrPermission) {
		t.Errorf("rm -rf / as a job: %v, want the blocklist's ErrPermission", err)
	}
	if _, err := jobs.StartJob(ctx, backend.JobRequest{Shell: strings.Repeat("x", cfg.Limits.MaxCommandBytes+1)}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("an over-long job: %v, want ErrInvalid", err)
	}
	if n := len(m.Calls()); n != 0 {
		t.Errorf("refused jobs reached the backend: %d calls", n)
	}
	// Open the workspace, then keep its jobs running.
	if _, err := s.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	ws, ok := m.Workspace("jobs")
	if !ok {
		t.Fatal("no mock workspace for the session")
	}
	ws.HoldJobs(true)
	first, err := jobs.StartJob(ctx, backend.JobRequest{Argv: []string{"sleep", "1"}, MaxRuntime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if first.MaxRuntime != time.Minute {
		t.Errorf("a job asking for 1h got %s, want the 1m cap", first.MaxRuntime)
	}
	if _, err := jobs.StartJob(ctx, backend.JobRequest{Argv: []string{"sleep", "2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.StartJob(ctx, backend.JobRequest{Argv: []string{"sleep", "3"}}); !errors.Is(err, backend.ErrInvalid) || errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "max_jobs") {
		t.Errorf("a job past max_jobs: %v, want ErrInvalid (a limit, not an outage) naming limits.max_jobs", err)
	}
}
