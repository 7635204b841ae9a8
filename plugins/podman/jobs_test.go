//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
	sdktests "github.com/wai-dev/wai/sdk-tests"
)

// reopener opens a kept session on a Backend instance of its own each
// call, sharing one state directory per test (as two wai processes do).
func reopener(extra map[string]any) func(t *testing.T, session string) backend.Workspace {
	var mu sync.Mutex
	state := map[*testing.T]string{}
	return func(t *testing.T, session string) backend.Workspace {
		needPodman(t)
		mu.Lock()
		if state[t] == "" {
			state[t] = t.TempDir()
		}
		dir := state[t]
		mu.Unlock()
		pb, err := New(bg, backend.Options{Config: testConfig(t, extra), StateDir: dir, Limits: backend.DefaultLimits()})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(bg, time.Minute)
			defer cancel()
			_ = pb.Close(ctx)
			_, _ = pb.RemoveSession(ctx, session) // removes the container and its jobs
		})
		ws, err := pb.Open(t.Context(), backend.WorkspaceSpec{Session: session, Keep: true})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return ws
	}
}

func TestJobsConformance(t *testing.T) {
	t.Parallel()
	sdktests.RunJobs(t, conformance)
}

// Without the agent binary jobs are refused, saying what to do.
func TestJobsNeedTheAgent(t *testing.T) {
	t.Parallel()
	ws := conformanceNoAgent.Open(t, backend.DefaultLimits())
	defer ws.Close(bg)
	_, err := ws.(backend.JobRunner).StartJob(t.Context(), backend.JobRequest{Argv: []string{"true"}})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "wai-agent") {
		t.Errorf("StartJob without the agent: %v, want ErrUnavailable naming wai-agent", err)
	}
}

// TestIdleReaperSparesRunningJobs: a session whose only use is a running
// background job is not idle-removed (the job counts as use); once the
// job ends, idle cleanup takes the container as before.
func TestIdleReaperSparesRunningJobs(t *testing.T) {
	t.Parallel()
	b, w, rec := recordedSession(t, map[string]any{"idle_timeout": "500ms"}, false)
	info, err := w.StartJob(t.Context(), backend.JobRequest{Shell: "while [ ! -e gate ]; do sleep 0.1; done"})
	if err != nil {
		t.Fatalf("StartJob: %v", err)
	}
	time.Sleep(2500 * time.Millisecond) // five idle timeouts
	if n := rec.count("runtime.podman.idle_cleanup"); n != 0 || !containerExists(t, b, w.ContainerName()) {
		t.Fatalf("the reaper removed a session with a running job (events %s)", rec)
	}
	st, err := w.JobStatus(t.Context(), info.ID, backend.JobOffsets{})
	if err != nil || !st.Running() {
		t.Fatalf("the job after five idle timeouts: %+v, %v; want running", st.JobInfo, err)
	}
	sh(t, w, "touch gate")
	deadline := time.Now().Add(20 * time.Second)
	for rec.count("runtime.podman.idle_cleanup") == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if rec.count("runtime.podman.idle_cleanup") == 0 {
		t.Errorf("the idle container was kept after its job ended (events %s)", rec)
	}
}

// TestJobOrphansOutliveCommands: what a job leaves running outside its
// process tree (reparented to init) is the job's, not swept as the
// leftovers of a command that started before the job and ends after it;
// cancelling the job kills it.
func TestJobOrphansOutliveCommands(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	w := openTest(t, b, false)
	m := "97." + strconv.Itoa(int(time.Now().UnixNano()%1e9))
	count := func() int {
		// The sleep itself, not the job's shell whose command line holds m.
		res := sh(t, w, `for f in /proc/[0-9]*/cmdline; do [ "$(tr '\0' ' ' <$f 2>/dev/null)" = "sleep `+m+` " ] && echo; done | wc -l`)
		n, _ := strconv.Atoi(strings.TrimSpace(res.Stdout))
		return n
	}
	cmdDone := make(chan backend.ExecResult, 1)
	go func() { cmdDone <- sh(t, w, "sleep 2") }()
	time.Sleep(500 * time.Millisecond)
	info, err := w.StartJob(t.Context(), backend.JobRequest{Shell: "(setsid sleep " + m + " &); sleep 60"})
	if err != nil {
		t.Fatalf("StartJob: %v", err)
	}
	for count() == 0 {
		time.Sleep(100 * time.Millisecond)
	}
	<-cmdDone // its leftover sweep has run
	if n := count(); n != 1 {
		t.Fatalf("the job's orphan after an earlier command ended: %d processes, want 1", n)
	}
	if _, err := w.CancelJob(t.Context(), info.ID); err != nil {
		t.Fatalf("CancelJob: %v", err)
	}
	if n := count(); n != 0 {
		t.Errorf("the job's orphan after cancel: %d processes, want none", n)
	}
}

// TestJobOutputChecksTheWindow: a stream window from the container is
// taken only when it is the one asked for, within its bounds.
func TestJobOutputChecksTheWindow(t *testing.T) {
	t.Parallel()
	ok := agentproto.JobStream{Data: []byte("stuv"), Offset: 18, Skipped: 10, Total: 26}
	out, err := jobOutput(ok, 8, 4)
	if err != nil || out.Text != "stuv" || out.Offset != 18 || out.Skipped != 10 || out.Next != 22 || !out.More || out.Total != 26 {
		t.Errorf("a valid window: %+v, %v", out, err)
	}
	for name, s := range map[string]agentproto.JobStream{
		"over max":         {Data: []byte("stuvw"), Offset: 18, Skipped: 10, Total: 26},
		"not from since":   {Data: []byte("stuv"), Offset: 18, Skipped: 0, Total: 26},
		"past the total":   {Data: []byte("stuv"), Offset: 24, Skipped: 16, Total: 26},
		"negative skipped": {Data: []byte("ab"), Offset: 6, Skipped: -2, Total: 26},
		"negative total":   {Offset: 0, Total: -1},
	} {
		if _, err := jobOutput(s, 8, 4); err == nil {
			t.Errorf("%s: taken", name)
		}
	}
	bad := agentproto.JobInfo{ID: "j0123456789ab", Command: []string{"x"}, State: "running", StartedNS: 1, MaxRuntimeMS: 1}
	if _, err := (&Backend{}).jobInfo("job.status", bad); err != nil {
		t.Errorf("a valid record: %v", err)
	}
	for name, mut := range map[string]func(*agentproto.JobInfo){
		"state":      func(j *agentproto.JobInfo) { j.State = "done" },
		"id":         func(j *agentproto.JobInfo) { j.ID = "../x" },
		"no end":     func(j *agentproto.JobInfo) { j.State = "exited" },
		"no command": func(j *agentproto.JobInfo) { j.Command = nil },
		"signal":     func(j *agentproto.JobInfo) { j.Signal = 999 },
	} {
		j := bad
		mut(&j)
		if _, err := (&Backend{}).jobInfo("job.status", j); !errors.Is(err, backend.ErrUnavailable) {
			t.Errorf("a record with a bad %s: %v, want ErrUnavailable", name, err)
		}
	}
}

// TestHostStopsAnOverdueJob: a job whose supervisor was stopped from
// inside the sandbox (so nothing in the container enforces its runtime)
// is stopped by the host once a poll finds it past its max runtime.
func TestHostStopsAnOverdueJob(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	b.slack = time.Second // the default 10 s only makes the test wait
	w := openTest(t, b, false)
	m := "96." + strconv.Itoa(int(time.Now().UnixNano()%1e9))
	// The supervisor must be stopped before it enforces the runtime
	// itself: 5 s leaves the stopping shell room on a loaded machine,
	// where 1 s did not.
	info, err := w.StartJob(t.Context(), backend.JobRequest{Argv: []string{"sleep", m}, MaxRuntime: 5 * time.Second})
	if err != nil {
		t.Fatalf("StartJob: %v", err)
	}
	res := sh(t, w, `n=0; for f in /proc/[0-9]*/cmdline; do case "$(tr '\0' ' ' <$f 2>/dev/null)" in "`+
		agentMountPath+` job run "*) p=${f#/proc/}; kill -STOP ${p%/cmdline} && n=$((n+1));; esac; done; echo $n`)
	if strings.TrimSpace(res.Stdout) != "1" {
		t.Fatalf("stopping the supervisor: %q %q", res.Stdout, res.Stderr)
	}
	st := pollJob(t, w, info.ID, backend.JobOffsets{}, func(s backend.JobStatus) bool { return !s.Running() })
	if st.State != backend.JobTimedOut || st.ExitCode != backend.TimeoutExitCode {
		t.Fatalf("the overdue job: %+v; want timed_out, 124", st.JobInfo)
	}
	if res := sh(t, w, `for f in /proc/[0-9]*/cmdline; do [ "$(tr '\0' ' ' <$f 2>/dev/null)" = "sleep `+m+` " ] && echo; done | wc -l`); strings.TrimSpace(res.Stdout) != "0" {
		t.Errorf("the overdue job's processes are left: %q", res.Stdout)
	}
}

// A command that stops the supervisor and rewrites its job's record in the
// container (a max runtime of a day) does not keep the job alive: the host
// judges by the deadline it recorded itself when the job started.
func TestHostDeadlineOutlivesARewrittenRecord(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	b.slack = time.Second
	w := openTest(t, b, false)
	m := "97." + strconv.Itoa(int(time.Now().UnixNano()%1e9))
	// The supervisor must be stopped before it enforces the runtime
	// itself: 5 s leaves the stopping shell room on a loaded machine,
	// where 1 s did not.
	info, err := w.StartJob(t.Context(), backend.JobRequest{Argv: []string{"sleep", m}, MaxRuntime: 5 * time.Second})
	if err != nil {
		t.Fatalf("StartJob: %v", err)
	}
	res := sh(t, w, `for f in /proc/[0-9]*/cmdline; do case "$(tr '\0' ' ' <$f 2>/dev/null)" in "`+
		agentMountPath+` job run "*) p=${f#/proc/}; kill -STOP ${p%/cmdline};; esac; done; `+
		`sed -i 's/"max_runtime_ms":[0-9]*/"max_runtime_ms":86400000/' /tmp/.wai-jobs/`+info.ID+`/job.json && grep -c 86400000 /tmp/.wai-jobs/`+info.ID+`/job.json`)
	if strings.TrimSpace(res.Stdout) != "1" {
		t.Fatalf("rewriting the record: %q %q", res.Stdout, res.Stderr)
	}
	st := pollJob(t, w, info.ID, backend.JobOffsets{}, func(s backend.JobStatus) bool { return !s.Running() })
	if st.State != backend.JobTimedOut {
		t.Fatalf("the job with a rewritten record: %+v; want timed_out", st.JobInfo)
	}
}
