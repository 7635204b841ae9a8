package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/internal/syncbuf"
	"github.com/wai-dev/wai/internal/tooltest"
)

// On a container backend (podman), a running job keeps the kernel's idle
// release (session_idle_timeout) from removing the session's container,
// and a podman_shell stop that ends the job says so, after which
// job_status and job_list report it lost with why and when (findings 1
// and 3 of the s26 trial: the job was gone, "no such job in this session").
func TestRunningJobSurvivesIdleAndStopMakesItLost(t *testing.T) {
	t.Parallel() // its own kernel and container names, mostly waiting on Podman
	b := tooltest.Only(t, func(b tooltest.Backend) bool { return b.Lifecycle })[0]
	var logs syncbuf.Buffer
	e := lifecycleKernel(t, b, &logs)
	j := call(t, e, "job_start", `{"command":["sleep","1000"]}`)
	waitLogged(t, &logs, "session.idle_jobs_run", "session.idle_release")
	if st := call(t, e, "job_status", `{"id":"`+j.ID+`"}`); st.State != "running" {
		t.Fatalf("after an idle sweep the job is %+v, want running", st)
	}
	res, err := e.CallIn(t, "jobs", "podman_shell", `{"action":"stop"}`)
	if err != nil || !strings.Contains(res.Message, "ended 1 running background job") {
		t.Fatalf("podman_shell stop: %q, %v; want it to say it ended the job", res.Message, err)
	}
	res, err = e.CallIn(t, "jobs", "job_status", `{"id":"`+j.ID+`"}`)
	if err != nil || !strings.Contains(res.Message, "is lost") || !strings.Contains(res.Message, "was stopped at") {
		t.Fatalf("job_status of the stopped job: %q, %v; want lost, with why and when", res.Message, err)
	}
	// Answered from the kernel's record: no new container was started to
	// ask, nor by the idle sweeps asking for running jobs meanwhile.
	s, err := e.Kernel.Session(t.Context(), "jobs", host.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := s.Lifecycle().State(t.Context()); err != nil || st.Running {
		t.Errorf("after the stop and job_status the container is %+v, %v; want none running", st, err)
	}
	res, err = e.CallIn(t, "jobs", "job_list", `{}`)
	if err != nil || !strings.Contains(res.Message, j.ID+" lost") {
		t.Errorf("job_list after the stop: %q, %v; want the job, lost", res.Message, err)
	}
}

// lifecycleKernel is a kernel on b with the jobs and podman_shell tools, a
// 1 s session_idle_timeout, and its log (debug and up) in logs.
func lifecycleKernel(t *testing.T, b tooltest.Backend, logs *syncbuf.Buffer) *tooltest.Env {
	cfg := host.DefaultConfig()
	cfg.StateDir = tooltest.StateDir(t)
	cfg.PluginDirs = []string{tooltest.PluginDir(t, "tools/jobs", "tools/podman_shell")}
	cfg.BundledTools = []string{"jobs", "podman_shell"}
	cfg.SessionIdleTimeout = time.Second
	m, opts := b.Setup(t, &cfg)
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	k, err := host.New(t.Context(), cfg, append(opts, host.WithLogger(log))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close(context.Background()) })
	if b.Probe != nil {
		b.Probe(t, k)
	}
	return &tooltest.Env{Backend: b, Kernel: k, Mock: m}
}

// waitLogged waits for the session "jobs" to log want, failing at once
// if it logs bad instead, and after a minute (sweeps come every second).
func waitLogged(t *testing.T, logs *syncbuf.Buffer, want, bad string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		for _, line := range strings.Split(logs.String(), "\n") {
			if !strings.Contains(line, " session=jobs") {
				continue
			}
			if strings.Contains(line, "msg="+bad+" ") {
				t.Fatalf("the session was released with its job running: %s", line)
			}
			if strings.Contains(line, "msg="+want+" ") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s for the session within a minute; log:\n%s", want, logs.String())
		}
	}
}
