package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// fakeContainers is a backend with Containers that records what the
// kernel passed on.
type fakeContainers struct {
	*fakeBackend
	notReady bool

	mu        sync.Mutex
	created   []backend.ContainerSpec
	destroyed []string
	live      map[string]backend.ContainerInfo
}

func newFakeContainers() *fakeContainers {
	return &fakeContainers{fakeBackend: newFake("fake", true), live: map[string]backend.ContainerInfo{}}
}

func (f *fakeContainers) ContainersPreflight(context.Context) (backend.ContainerPreflight, error) {
	if f.notReady {
		return backend.ContainerPreflight{Summary: "not ready: 1 check(s) failed", Checks: []backend.PreflightCheck{{Name: "service", Guidance: "start it"}}}, nil
	}
	return backend.ContainerPreflight{Ready: true, Summary: "ready"}, nil
}

func (f *fakeContainers) CreateContainer(_ context.Context, s backend.ContainerSpec) (backend.ContainerInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// As an operator's env_patterns would: auto passes nothing without.
	env, keys, err := backend.PassthroughEnv(s.HostEnv, s.EnvPassthrough, []string{"*_API_KEY", "*_TOKEN"}, s.Env)
	if err != nil {
		return backend.ContainerInfo{}, err
	}
	s.Env = env
	f.created = append(f.created, s)
	info := backend.ContainerInfo{Name: s.Name, Session: s.Owner.Session, User: s.Owner.User, Persistent: s.Persistent, EnvKeys: keys, State: "running"}
	f.live[s.Name] = info
	return info, nil
}

func (f *fakeContainers) ExecContainer(_ context.Context, ref backend.ContainerRef, req backend.ExecRequest) (backend.ExecResult, error) {
	return backend.ExecResult{Command: req.Command(), Stdout: "ran " + ref.Name + ": " + req.Shell}, nil
}

func (f *fakeContainers) ListContainers(_ context.Context, o backend.ContainerOwner) ([]backend.ContainerInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []backend.ContainerInfo
	for _, c := range f.live {
		if c.User == o.User && (o.Session == "" || c.Session == o.Session) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (f *fakeContainers) ContainerStatus(_ context.Context, ref backend.ContainerRef, _ bool) (backend.ContainerInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.live[ref.Name]
	if !ok || c.User != ref.Owner.User {
		return c, backend.Errorf(backend.ErrNotFound, "status", ref.Name, "no such container")
	}
	return c, nil
}

func (f *fakeContainers) DestroyContainer(_ context.Context, ref backend.ContainerRef, _ bool) (backend.ContainerInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.live[ref.Name]
	if !ok {
		return c, backend.Errorf(backend.ErrNotFound, "destroy", ref.Name, "no such container")
	}
	delete(f.live, ref.Name)
	f.destroyed = append(f.destroyed, ref.Name)
	return c, nil
}

// setState is the fake's start and stop: the container stays, files and all.
func (f *fakeContainers) setState(ref backend.ContainerRef, state string) (backend.ContainerInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.live[ref.Name]
	if !ok || c.User != ref.Owner.User {
		return backend.ContainerInfo{}, backend.Errorf(backend.ErrNotFound, "containers."+state, ref.Name, "no such container")
	}
	c.State, c.Running = state, state == "running"
	f.live[ref.Name] = c
	return c, nil
}

func (f *fakeContainers) StartContainer(_ context.Context, ref backend.ContainerRef) (backend.ContainerInfo, error) {
	return f.setState(ref, "running")
}

func (f *fakeContainers) StopContainer(_ context.Context, ref backend.ContainerRef, _ bool) (backend.ContainerInfo, error) {
	return f.setState(ref, "exited")
}

func (f *fakeContainers) DestroyContainers(ctx context.Context, o backend.ContainerOwner, keep bool) ([]backend.ContainerInfo, error) {
	ls, _ := f.ListContainers(ctx, o)
	var out []backend.ContainerInfo
	for _, c := range ls {
		if !keep || !c.Persistent {
			_, _ = f.DestroyContainer(ctx, backend.ContainerRef{Owner: o, Name: c.Name}, true)
			out = append(out, c)
		}
	}
	return out, nil
}

func (f *fakeContainers) CopyToContainer(context.Context, backend.ContainerRef, backend.ContainerCopy) (backend.ContainerCopyResult, error) {
	return backend.ContainerCopyResult{Files: 1}, nil
}

// CopyFromContainer writes a relative host path into the session's fake
// workspace, as the real copy does, so a test sees what reached it.
func (f *fakeContainers) CopyFromContainer(_ context.Context, ref backend.ContainerRef, cp backend.ContainerCopy) (backend.ContainerCopyResult, error) {
	f.fakeBackend.mu.Lock()
	defer f.fakeBackend.mu.Unlock()
	if files := f.fakeBackend.files[ref.Owner.Session]; files != nil && cp.HostPath != "" && !path.IsAbs(cp.HostPath) {
		files[clean(cp.HostPath)] = "from " + ref.Name + ":" + cp.ContainerPath
	}
	return backend.ContainerCopyResult{Files: 1}, nil
}

func (f *fakeContainers) InteractiveHint(_ context.Context, ref backend.ContainerRef) (backend.InteractiveHint, error) {
	return backend.InteractiveHint{Container: ref.Name, Shell: "sh", Command: "podman exec -it " + ref.Name + " sh"}, nil
}

// Interface guards
var _ backend.Containers = (*fakeContainers)(nil)

func containersKernel(t *testing.T, policyConfig map[string]any) (*Kernel, *fakeContainers) {
	t.Helper()
	fc := newFakeContainers()
	return safetyKernel(t, testConfig(t), policyConfig, fc), fc
}

// safetyKernel makes a kernel of cfg on b with the blocklist and
// container_safety (its config policyConfig) as the default policies,
// closed when the test ends.
func safetyKernel(t *testing.T, cfg Config, policyConfig map[string]any, b backend.Backend, opts ...Option) *Kernel {
	t.Helper()
	cfg.DefaultPolicies = []string{"blocklist"}
	cfg.Policies = []PolicyConfig{{Name: "container_safety", Config: policyConfig}}
	return kernelOn(t, cfg, b, opts...)
}

func TestContainersKernelPath(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Ada\n"), 0o644)
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "known_hosts"), []byte("github.com ssh-ed25519 AAAA\n"), 0o644)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("PRIVATE"), 0o600)
	t.Setenv("HOME", home)
	t.Setenv("FOO_API_KEY", "sk-secret")
	// wai's own secrets match *_TOKEN yet never pass: WAI_* always, and
	// the configured token variable (SecretEnv).
	t.Setenv("WAI_MCP_TOKEN", "wai-bearer")
	t.Setenv("SERVE_TOKEN", "serve-bearer")
	t.Setenv("PATH", t.TempDir()) // no gh
	cfg := testConfig(t)
	cfg.SecretEnv = []string{"SERVE_TOKEN"}
	fc := newFakeContainers()
	k := safetyKernel(t, cfg, map[string]any{"allow_gh_forwarding": true}, fc)
	s := session(t, k, "c1")
	ctx := context.Background()
	resp, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "box", ForwardGit: true, ForwardGh: true,
		Env: map[string]string{"EXPLICIT": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	spec := fc.created[0]
	if spec.Env["FOO_API_KEY"] != "sk-secret" || spec.Env["EXPLICIT"] != "1" || spec.Env["PATH"] != "" ||
		spec.Env["WAI_MCP_TOKEN"] != "" || spec.Env["SERVE_TOKEN"] != "" {
		t.Errorf("env passed on: %v", spec.Env)
	}
	var files []string
	for _, f := range spec.Files {
		files = append(files, f.Path)
	}
	if strings.Join(files, ",") != ".gitconfig,.ssh/known_hosts" {
		t.Errorf("forward_git files %v: want .gitconfig and known_hosts, never a key", files)
	}
	if !spec.MountWorkspace || !spec.Provisioning["forward_git"] {
		t.Errorf("spec %+v: mount_cwd defaults on, provisioning recorded", spec)
	}
	if len(resp.Notes) != 1 || !strings.Contains(resp.Notes[0], "gh is not installed") {
		t.Errorf("notes %v: want gh skipped with guidance", resp.Notes)
	}
	out, _ := json.Marshal(resp)
	if strings.Contains(string(out), "sk-secret") || !strings.Contains(string(out), "FOO_API_KEY") {
		t.Errorf("the response must name env keys, never values: %s", out)
	}
	if r, err := s.Containers(ctx, ContainerRequest{Operation: "exec", Container: "box", Command: "echo hi"}); err != nil || r.Exec.Stdout != "ran box: echo hi" {
		t.Errorf("exec: %+v, %v", r.Exec, err)
	}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "bogus"}); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "copy_out") {
		t.Errorf("unknown operation: %v", err)
	}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "exec"}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("exec without a container: %v", err)
	}
	resp, err = s.Containers(ctx, ContainerRequest{Operation: "create", Name: "p", Persistent: true})
	if err != nil {
		t.Fatal(err)
	}
	if fc.created[1].MountWorkspace {
		t.Error("a persistent container of an ending session mounts its workspace")
	}
	if len(resp.Notes) != 1 || !strings.Contains(resp.Notes[0], "no /workspace") {
		t.Errorf("create persistent: notes %q; want one saying it has no /workspace", resp.Notes)
	}
	// Closing the session destroys its non-persistent containers only.
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if strings.Join(fc.destroyed, ",") != "box" {
		t.Errorf("destroyed at close: %v, want box only", fc.destroyed)
	}
}

func TestContainersGates(t *testing.T) {
	ctx := context.Background()
	deny := []struct {
		req ContainerRequest
		key string
	}{
		{ContainerRequest{Operation: "create", Network: "host"}, "allow_host_network"},
		{ContainerRequest{Operation: "create", Mounts: []backend.ContainerMount{{HostPath: "/etc", ContainerPath: "/x"}}}, "allow_sensitive_mounts"},
		{ContainerRequest{Operation: "create", ForwardSSH: true}, "allow_ssh_forwarding"},
		{ContainerRequest{Operation: "create", EnvPassthrough: json.RawMessage(`"all"`)}, "allow_env_passthrough_all"},
		{ContainerRequest{Operation: "create", GPU: true}, "allow_gpu"},
		{ContainerRequest{Operation: "destroy_all"}, "allow_destroy_all"},
	}
	for _, d := range deny {
		k, fc := containersKernel(t, nil)
		_, err := session(t, k, "g").Containers(ctx, d.req)
		// Without an approver an ask is a denial naming the config key.
		if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), d.key) {
			t.Errorf("%s: %v, want a denial naming %s", d.key, err, d.key)
		}
		k, _ = containersKernel(t, map[string]any{"ask": false})
		if _, err := session(t, k, "g").Containers(ctx, d.req); !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), d.key) {
			t.Errorf("%s with ask = false: %v, want a denial naming %s", d.key, err, d.key)
		}
		if len(fc.created) != 0 {
			t.Errorf("%s: the backend was reached", d.key)
		}
		k, _ = containersKernel(t, map[string]any{d.key: true})
		if _, err := session(t, k, "g").Containers(ctx, d.req); errors.Is(err, backend.ErrPermission) {
			t.Errorf("%s = true: still denied: %v", d.key, err)
		}
	}
	k, _ := containersKernel(t, map[string]any{"max_containers_per_session": 1})
	s := session(t, k, "m")
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "b"}); !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "max_containers_per_session") {
		t.Errorf("a second container over the max: %v", err)
	}
}

func TestContainersPreflightOnFirstCreate(t *testing.T) {
	k, fc := containersKernel(t, nil)
	fc.notReady = true
	resp, err := session(t, k, "p").Containers(context.Background(), ContainerRequest{Operation: "create"})
	if !errors.Is(err, backend.ErrUnavailable) || resp.Preflight == nil || resp.Preflight.Checks[0].Guidance != "start it" || len(fc.created) != 0 ||
		!strings.Contains(err.Error(), "service failed") || !strings.Contains(err.Error(), "start it") {
		t.Errorf("create when not ready: %+v, %v", resp, err)
	}
}

func TestContainersNeedTheCapability(t *testing.T) {
	k, _ := newKernel(t, testConfig(t)) // a backend without Containers
	if _, err := session(t, k, "n").Containers(context.Background(), ContainerRequest{Operation: "list"}); !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("a backend without containers: %v, want ErrUnavailable", err)
	}
}

func TestContainersGitForwardWithoutConfig(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	k, fc := containersKernel(t, nil)
	resp, err := session(t, k, "g").Containers(context.Background(), ContainerRequest{Operation: "create", Name: "b", ForwardGit: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(fc.created[0].Files) != 0 || len(resp.Notes) != 1 || !strings.Contains(resp.Notes[0], "no git configuration") {
		t.Errorf("forward_git without a config: files %v, notes %v", fc.created[0].Files, resp.Notes)
	}
}

// wai_containers hands the raw request to the kernel, which refuses a
// field it does not know rather than run without it.
func TestContainersDecodeStrictly(t *testing.T) {
	k, fc := containersKernel(t, nil)
	env := callEnv{session(t, k, "d")}
	_, err := env.Containers(context.Background(), []byte(`{"operation":"create","netwrok":"none"}`))
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "netwrok") || len(fc.created) != 0 {
		t.Errorf("an unknown field: %v, want ErrInvalid naming it and nothing created", err)
	}
}

func TestContainersGhForward(t *testing.T) {
	bin := t.TempDir()
	gh := filepath.Join(bin, "gh")
	os.WriteFile(gh, []byte("#!/bin/sh\n[ \"$1 $2\" = \"auth token\" ] && echo gho_test123\n"), 0o755)
	t.Setenv("PATH", bin)
	t.Setenv("HOME", t.TempDir())
	// The token is a credential: without the key, a person must approve.
	k, _ := containersKernel(t, nil)
	if _, err := session(t, k, "gh").Containers(context.Background(), ContainerRequest{Operation: "create", ForwardGh: true}); !errors.Is(err, backend.ErrPermission) ||
		!strings.Contains(err.Error(), "allow_gh_forwarding") {
		t.Errorf("forward_gh without approval: %v, want a denial naming allow_gh_forwarding", err)
	}
	k, fc := containersKernel(t, map[string]any{"allow_gh_forwarding": true})
	s := session(t, k, "gh")
	resp, err := s.Containers(context.Background(), ContainerRequest{Operation: "create", Name: "a", ForwardGh: true,
		Env: map[string]string{"GITHUB_TOKEN": "mine"}})
	if err != nil {
		t.Fatal(err)
	}
	if env := fc.created[0].Env; env["GH_TOKEN"] != "gho_test123" || env["GITHUB_TOKEN"] != "mine" || len(resp.Notes) != 0 {
		t.Errorf("gh logged in: GH_TOKEN %q GITHUB_TOKEN %q (explicit env wins), notes %v", env["GH_TOKEN"], env["GITHUB_TOKEN"], resp.Notes)
	}
	os.WriteFile(gh, []byte("#!/bin/sh\necho 'not logged in' >&2; exit 1\n"), 0o755)
	resp, err = s.Containers(context.Background(), ContainerRequest{Operation: "create", Name: "b", ForwardGh: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, set := fc.created[1].Env["GH_TOKEN"]; set || len(resp.Notes) != 1 || !strings.Contains(resp.Notes[0], "gh auth login") {
		t.Errorf("gh logged out: env %v, notes %v", fc.created[1].Env, resp.Notes)
	}
}

// Concurrent creates in one session never pass max_containers_per_session
// between them.
func TestContainersMaxUnderConcurrency(t *testing.T) {
	k, fc := containersKernel(t, map[string]any{"max_containers_per_session": 2})
	s := session(t, k, "race")
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.Containers(context.Background(), ContainerRequest{Operation: "create", Name: "c" + string(rune('a'+i))})
		}()
	}
	wg.Wait()
	if n := len(fc.created); n != 2 {
		t.Errorf("%d containers created, the max is 2", n)
	}
}
