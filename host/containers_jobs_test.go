package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/plugins/mock"
)

// jobContainers adds ContainerJobs to the fake: each live container's
// jobs are a mock workspace's, whose jobs hold until FinishJobs.
type jobContainers struct {
	*fakeContainers
	mb     *mock.Backend
	jobsMu sync.Mutex
	jobs   map[string]*mock.Workspace
}

func (f *jobContainers) ContainerJobs(ctx context.Context, ref backend.ContainerRef) (backend.JobRunner, error) {
	f.mu.Lock()
	_, live := f.live[ref.Name]
	f.mu.Unlock()
	if !live {
		return nil, backend.Errorf(backend.ErrNotFound, "containers.jobs", ref.Name, "no such managed container")
	}
	f.jobsMu.Lock()
	defer f.jobsMu.Unlock()
	if w, ok := f.jobs[ref.Name]; ok {
		return w, nil
	}
	ws, err := f.mb.Open(ctx, backend.WorkspaceSpec{Session: "ctr-" + ref.Name})
	if err != nil {
		return nil, err
	}
	w := ws.(*mock.Workspace)
	w.HoldJobs(true)
	f.jobs[ref.Name] = w
	return w, nil
}

func newJobContainers() *jobContainers {
	mb := mock.New(mock.Options{})
	mb.AddResponse("make", backend.ExecResult{ExitCode: 2, Stdout: "compiling\n", Stderr: "error: boom\n"})
	return &jobContainers{fakeContainers: newFakeContainers(), mb: mb, jobs: map[string]*mock.Workspace{}}
}

// backgroundExecCases runs background exec through the containers tool as
// Wasm and the kernel k (TestContainersToolPlugin's, with max_jobs 1 and
// a 1m job_max_runtime; container box exists): started, polled while
// running and after completion (the message says what to do next),
// cancelled; the kernel clamps the runtime and caps the running jobs per
// container.
func backgroundExecCases(t *testing.T, k *Kernel, fc *jobContainers) {
	ctx := context.Background()
	call := func(args string) (ToolResult, ContainerJob) {
		t.Helper()
		res, err := k.Call(ctx, "tool", "containers", json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		var v struct {
			Job ContainerJob `json:"job"`
		}
		_ = json.Unmarshal(res.Value, &v)
		return res, v.Job
	}
	r, j := call(`{"operation":"exec_background","container":"box","command":"make all","timeout":7200}`)
	if !r.OK || j.ID == "" || j.State != "running" || !strings.Contains(r.Message, "exec_poll") {
		t.Fatalf("exec_background: %+v", r)
	}
	if j.MaxRuntimeMS != time.Minute.Milliseconds() {
		t.Errorf("a 2h runtime was not clamped to limits.job_max_runtime: %d ms", j.MaxRuntimeMS)
	}
	// A limit is "invalid" (fix the request), not "unavailable": the
	// backend is not down.
	if r, _ := call(`{"operation":"exec_background","container":"box","command":"sleep 9"}`); r.OK || !strings.Contains(r.Message, "limits.max_jobs") ||
		!strings.Contains(string(r.Value), `"kind":"invalid"`) {
		t.Errorf("a second running job with max_jobs 1: %+v, want kind invalid naming limits.max_jobs", r)
	}
	poll := `{"operation":"exec_poll","container":"box","job_id":"` + j.ID + `"}`
	if r, p := call(poll); !r.OK || p.State != "running" || !strings.Contains(r.Message, "still running") || !strings.Contains(r.Message, "Poll again later") {
		t.Errorf("poll while running: %+v", r)
	}
	fc.jobsMu.Lock()
	box := fc.jobs["box"]
	fc.jobsMu.Unlock()
	box.FinishJobs()
	r, p := call(poll)
	if !r.OK || p.State != "exited" || p.ExitCode != 2 || p.Stdout == nil || p.Stdout.Text != "compiling\n" || p.Stderr.Next != int64(len("error: boom\n")) {
		t.Errorf("poll after completion: %+v %+v", r, p)
	}
	if !strings.Contains(r.Message, "ended with exit code 2") || !strings.Contains(r.Message, "error: boom") || !strings.Contains(r.Message, "nothing more") {
		t.Errorf("poll after completion, the message: %s", r.Message)
	}
	_, two := call(`{"operation":"exec_background","container":"box","command":"sleep 9"}`)
	if r, c := call(`{"operation":"exec_cancel","container":"box","job_id":"` + two.ID + `"}`); !r.OK || c.State != "cancelled" || !strings.Contains(r.Message, "Cancelled") {
		t.Errorf("exec_cancel: %+v", r)
	}
	for args, want := range map[string]string{
		`{"operation":"exec_poll","container":"box"}`:                                 "job_id",
		`{"operation":"exec_poll","container":"box","job_id":"j0123456789ab"}`:        "no such job",
		`{"operation":"exec_poll","container":"gone","job_id":"` + j.ID + `"}`:        "no such managed container",
		`{"operation":"exec_background","container":"box"}`:                           "give command",
		`{"operation":"exec_poll","container":"box","job_id":"x","stdout_offset":-1}`: "must not be negative",
	} {
		if r, _ := call(args); r.OK || !strings.Contains(r.Message, want) {
			t.Errorf("%s: %+v, want a failure naming %q", args, r, want)
		}
	}
}

// A backend whose containers run no jobs says so, and what to use.
func TestContainerJobsUnsupported(t *testing.T) {
	s := session(t, kernelOn(t, testConfig(t), newFakeContainers()), "nojobs")
	if _, err := s.Containers(t.Context(), ContainerRequest{Operation: "create", Name: "box"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Containers(t.Context(), ContainerRequest{Operation: "exec_background", Container: "box", Command: "true"})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "use exec") {
		t.Errorf("exec_background without ContainerJobs: %v, want ErrUnavailable pointing to exec", err)
	}
}

// The policy chain judges each background operation as its own action,
// with the description containers.exec gets; a denied start never reaches
// the backend.
func TestContainerJobsPassThePolicyChain(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	deny := &scriptedPolicy{name: "no-bg", check: func(_ context.Context, req CheckRequest) (Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		if req.Container != nil && strings.HasPrefix(req.Action, "containers.exec_") {
			seen = append(seen, req.Action+" "+req.Container.Container)
		}
		if req.Action == "containers.exec_background" && req.Container.Container == "locked" {
			return Decision{Reason: "no background jobs in locked"}, nil
		}
		return Decision{Allow: true}, nil
	}}
	jc := newJobContainers()
	s := session(t, kernelOn(t, testConfig(t), jc, WithPolicy(deny)), "policy")
	ctx := t.Context()
	for _, name := range []string{"locked", "open"} {
		if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Containers(ctx, ContainerRequest{Operation: "exec_background", Container: "locked", Command: "make"})
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "no background jobs in locked") {
		t.Errorf("a denied exec_background: %v, want ErrPermission with the policy's reason", err)
	}
	if _, ok := jc.jobs["locked"]; ok {
		t.Errorf("a denied exec_background reached the backend")
	}
	resp, err := s.Containers(ctx, ContainerRequest{Operation: "exec_background", Container: "open", Command: "make"})
	if err != nil || resp.Job == nil {
		t.Fatalf("exec_background: %+v, %v", resp, err)
	}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "exec_poll", Container: "open", JobID: resp.Job.ID}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, ", "); got != "containers.exec_background locked, containers.exec_background open, containers.exec_poll open" {
		t.Errorf("the policy saw %s", got)
	}
}
