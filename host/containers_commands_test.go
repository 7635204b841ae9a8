package host

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// execCounting counts the commands that reached the backend.
type execCounting struct {
	*jobContainers
	execs atomic.Int32
}

func (f *execCounting) ExecContainer(ctx context.Context, ref backend.ContainerRef, req backend.ExecRequest) (backend.ExecResult, error) {
	f.execs.Add(1)
	return f.jobContainers.ExecContainer(ctx, ref, req)
}

// onlyLs is a security team's command policy: "only ls". It allows every
// containers.* action (container_safety's business) and records the
// shell.exec checks it saw.
type onlyLs struct {
	mu   sync.Mutex
	seen []CheckRequest
}

func (p *onlyLs) Name() string { return "only-ls" }

func (p *onlyLs) Check(_ context.Context, req CheckRequest) (Decision, error) {
	if req.Action != ActionShellExec {
		return Decision{Allow: true}, nil
	}
	p.mu.Lock()
	p.seen = append(p.seen, req)
	p.mu.Unlock()
	if req.Shell == "ls" || slices.Equal(req.Command, []string{"ls"}) {
		return Decision{Allow: true}, nil
	}
	return Decision{Reason: "only ls may run"}, nil
}

// A command policy sees every command the agent runs in a managed
// container as shell.exec, and its deny stops it: exec, exec_background,
// a create's setup commands (before the container is made) and a compose
// service's command. The trial's `exec "id; cat /etc/shadow"` ran past a
// policy that allowed only git and ls, which saw the container's name.
func TestContainerCommandsPassTheCommandPolicies(t *testing.T) {
	pol := &onlyLs{}
	fc := &execCounting{jobContainers: newJobContainers()}
	s := session(t, kernelOn(t, testConfig(t), fc, WithPolicy(pol)), "cmds")
	ctx := t.Context()
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "box"}); err != nil {
		t.Fatal(err)
	}
	denied := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "only ls may run") {
			t.Errorf("%s: %v, want ErrPermission from the command policy", what, err)
		}
	}
	_, err := s.Containers(ctx, ContainerRequest{Operation: "exec", Container: "box", Command: "id; cat /etc/shadow", Workdir: "/src"})
	denied("exec", err)
	if err == nil || !strings.Contains(err.Error(), "(in container box)") {
		t.Errorf("the refusal does not say where the command would run: %v", err)
	}
	_, err = s.Containers(ctx, ContainerRequest{Operation: "exec_background", Container: "box", Command: "make"})
	denied("exec_background", err)
	_, err = s.Containers(ctx, ContainerRequest{Operation: "create", Name: "setup", SetupCommands: []string{"ls", "curl -sS x"}})
	denied("create with setup_commands", err)
	if n := fc.execs.Load(); n != 0 {
		t.Errorf("%d refused commands reached the backend", n)
	}
	if _, ok := fc.jobs["box"]; ok || len(fc.created) != 1 {
		t.Errorf("refused: a job started (%v) or a container was made (%d creates, want 1)", ok, len(fc.created))
	}
	// Allowed, it runs; what the policy saw is the command, where it runs.
	if r, err := s.Containers(ctx, ContainerRequest{Operation: "exec", Container: "box", Command: "ls"}); err != nil || r.Exec.Stdout != "ran box: ls" {
		t.Errorf("an allowed exec: %+v, %v", r.Exec, err)
	}
	pol.mu.Lock()
	defer pol.mu.Unlock()
	first := pol.seen[0]
	if !slices.Equal(first.Command, []string{"/bin/sh", "-c", "id; cat /etc/shadow"}) || first.Shell != "id; cat /etc/shadow" ||
		first.Cwd != "/src" || first.Container == nil || first.Container.Operation != "exec" || first.Container.Container != "box" || first.Session != "cmds" {
		t.Errorf("the policy saw %+v (container %+v)", first, first.Container)
	}
	var got []string
	for _, r := range pol.seen {
		got = append(got, r.Container.Operation+":"+r.Shell)
	}
	if want := "exec:id; cat /etc/shadow,exec_background:make,create:ls,create:curl -sS x,exec:ls"; strings.Join(got, ",") != want {
		t.Errorf("shell.exec checks %s\nwant %s", strings.Join(got, ","), want)
	}
}

// A compose service's command is judged as it runs: a string as the
// shell string, a list as the argv; the refused one leaves nothing of the
// project.
func TestComposeServiceCommandsPassTheCommandPolicies(t *testing.T) {
	pol := &onlyLs{}
	fc := &fakeNetContainers{fakeContainers: newFakeContainers(), networks: map[string]backend.NetworkInfo{}, files: map[string]string{
		"/r/c.yaml": "services:\n  a: {image: i, command: [ls]}\n  b: {image: i, depends_on: [a], command: cat /etc/shadow}\n",
	}}
	s := session(t, kernelOn(t, testConfig(t), fc, WithPolicy(pol)), "compose")
	_, err := s.Containers(t.Context(), ContainerRequest{Operation: "compose_up", File: "/r/c.yaml", Project: "p", MountCwd: new(bool)})
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "only ls may run") || !strings.Contains(err.Error(), "service b") {
		t.Fatalf("compose_up with a refused command: %v, want service b denied by the command policy", err)
	}
	if len(fc.live) != 0 || len(fc.networks) != 0 {
		t.Errorf("after the refusal: containers %v, networks %v; want none", fc.live, fc.networks)
	}
	pol.mu.Lock()
	defer pol.mu.Unlock()
	if len(pol.seen) != 2 || !slices.Equal(pol.seen[0].Command, []string{"ls"}) || pol.seen[1].Shell != "cat /etc/shadow" ||
		pol.seen[1].Container.Service != "b" || pol.seen[1].Container.Container != "p-b" {
		t.Errorf("the policy saw %+v", pol.seen)
	}
}

// A policy that asks about a command in a container asks the person once
// per question in one call (two identical setup commands), and an
// approval of it in the session's shell does not approve it in a container.
func TestContainerCommandAsksOncePerCall(t *testing.T) {
	asks := decidingPolicy{name: "asks", decide: func(r CheckRequest) Decision {
		if r.Action != ActionShellExec {
			return Decision{Allow: true}
		}
		return Decision{Ask: true, Reason: "`" + r.Shell + "` is new"}
	}}
	ap := &fakeApprover{answer: ApprovalOnce}
	k := kernelOn(t, testConfig(t), newFakeContainers(), WithPolicy(asks))
	s, err := k.Session(t.Context(), "ask", SessionOptions{Approver: ap})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Shell().Execute(t.Context(), backend.ExecRequest{Shell: "make"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Containers(t.Context(), ContainerRequest{Operation: "create", Name: "box", SetupCommands: []string{"make", "make"}}); err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, a := range ap.asked {
		subjects = append(subjects, a.Subject)
	}
	if want := "make,make (in container box)"; strings.Join(subjects, ",") != want {
		t.Errorf("asked about %q, want %q", subjects, want)
	}
}

// A container command is held to the kernel's command length, as a
// session command is, before any policy or backend sees it.
func TestContainersExecCommandLimit(t *testing.T) {
	k, _ := containersKernel(t, nil)
	ctx := context.Background()
	s := session(t, k, "long")
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "lim"}); err != nil {
		t.Fatal(err)
	}
	long := "echo " + strings.Repeat("x", k.cfg.Limits.MaxCommandBytes)
	_, err := s.Containers(ctx, ContainerRequest{Operation: "exec", Container: "lim", Command: long})
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "over the limit") || !strings.Contains(err.Error(), "copy_in") {
		t.Fatalf("a command over max_command_bytes: %v, want ErrInvalid saying what to do", err)
	}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "exec", Container: "lim", Command: "echo a\x00b"}); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("a NUL byte: %v", err)
	}
}
