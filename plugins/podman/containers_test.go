//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
)

// containerTest opens a backend and a session, and destroys every managed
// container of the session when the test ends.
func containerTest(t *testing.T, extra map[string]any) (*Backend, *Workspace, backend.ContainerOwner) {
	t.Helper()
	b := newTestBackend(t, backend.Limits{}, extra)
	w := openTest(t, b, false)
	owner := backend.ContainerOwner{Session: w.session}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
		defer cancel()
		if _, err := b.DestroyContainers(ctx, owner, false); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return b, w, owner
}

func create(t *testing.T, b *Backend, spec backend.ContainerSpec) backend.ContainerInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	defer cancel()
	info, err := b.CreateContainer(ctx, spec)
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	return info
}

func cexec(t *testing.T, b *Backend, ref backend.ContainerRef, script string) backend.ExecResult {
	t.Helper()
	res, err := b.ExecContainer(bg, ref, backend.ExecRequest{Shell: script, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("ExecContainer(%q): %v", script, err)
	}
	return res
}

func TestContainerLifecycle(t *testing.T) {
	t.Parallel()
	b, _, owner := containerTest(t, nil)
	info := create(t, b, backend.ContainerSpec{Owner: owner, Purpose: "Python!", MountWorkspace: true,
		Env:          map[string]string{"FOO_API_KEY": "s3cret-value"},
		Files:        []backend.ContainerFile{{Path: ".gitconfig", Data: []byte("[user]\n\tname = Ada Tester\n"), Mode: 0o644}},
		Provisioning: map[string]bool{"forward_git": true}})
	if !strings.HasPrefix(info.Name, "wai-python-") || !containerNameRE.MatchString(info.Name) {
		t.Errorf("generated name %q: want wai-python-XXXXXX", info.Name)
	}
	ref := backend.ContainerRef{Owner: owner, Name: info.Name}
	cctx := onServiceCtx(t, b.svc)
	data, err := containers.Inspect(cctx, info.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{labelManaged: "true", labelKind: kindContainer, labelSession: owner.Session,
		labelUser: "", labelPurpose: "Python!", labelPersistent: "false", labelEnvKeys: "FOO_API_KEY"} {
		if got, ok := data.Config.Labels[k]; !ok || got != v {
			t.Errorf("label %s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	if _, err := time.Parse(time.RFC3339, data.Config.Labels[labelCreated]); err != nil {
		t.Errorf("label %s: %v", labelCreated, err)
	}
	// No network unless asked for: a route out is egress, never a default.
	if mode := data.HostConfig.NetworkMode; mode != "none" {
		t.Errorf("network mode %q of a create without one: want none", mode)
	}
	// Hardening, read from inside: no capabilities, no new privileges,
	// the memory and pids limits, no user namespaces.
	res := cexec(t, b, ref, `grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max 2>/dev/null; `+
		`cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null; unshare -U true && echo USERNS-OK || echo userns-denied`)
	for _, want := range []string{"CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2", "\n256\n", "4294967296", "userns-denied"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("hardening: %q missing from\n%s%s", want, res.Stdout, res.Stderr)
		}
	}
	res = cexec(t, b, ref, `echo "$FOO_API_KEY"; git config user.name; pwd; id -u`)
	if res.Stdout != "s3cret-value\nAda Tester\n/workspace\n65534\n" || res.ExitCode != 0 {
		t.Errorf("exec: %+v", res)
	}
	meta, err := os.ReadFile(b.metaPath(info.Name))
	if err != nil {
		t.Fatalf("metadata: %v", err)
	}
	if strings.Contains(string(meta), "s3cret") || !strings.Contains(string(meta), "FOO_API_KEY") || !strings.Contains(string(meta), `"forward_git": true`) {
		t.Errorf("metadata must name the env keys and provisioning, never values:\n%s", meta)
	}
	hint, err := b.InteractiveHint(bg, ref)
	if err != nil || hint.Shell != "bash" || hint.Command != "podman exec -it "+info.Name+" bash" {
		t.Errorf("InteractiveHint = %+v, %v", hint, err)
	}
	st, err := b.ContainerStatus(bg, ref, true)
	if err != nil || !st.Running || st.Health != "healthy" {
		t.Errorf("ContainerStatus = %+v, %v", st, err)
	}
	// Labels are the truth: list works with the metadata gone.
	os.RemoveAll(filepath.Join(b.cfg.fixedDir(), containersDirName))
	ls, err := b.ListContainers(bg, owner)
	if err != nil || len(ls) != 1 || ls[0].Name != info.Name || !slices.Equal(ls[0].EnvKeys, []string{"FOO_API_KEY"}) || ls[0].Session != owner.Session {
		t.Errorf("ListContainers after the metadata was deleted = %+v, %v", ls, err)
	}
	if _, err := b.DestroyContainer(bg, ref, false); err != nil {
		t.Fatalf("DestroyContainer: %v", err)
	}
	if _, err := b.DestroyContainer(bg, ref, true); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("destroying it again: %v, want ErrNotFound", err)
	}
	if ls, err := b.ListContainers(bg, owner); err != nil || len(ls) != 0 {
		t.Errorf("ListContainers after destroy = %+v, %v", ls, err)
	}
}

func TestContainerRefusals(t *testing.T) {
	t.Parallel()
	allowed := t.TempDir()
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(allowed, "escape"))
	b, _, owner := containerTest(t, map[string]any{"allowed_host_roots": []string{allowed},
		"containers": map[string]any{"allow_network_egress": true}})
	for name, spec := range map[string]backend.ContainerSpec{
		"privileged":      {Privileged: true},
		"host network":    {Network: "host"},
		"host pid":        {HostPID: true},
		"host ipc":        {HostIPC: true},
		"devices":         {Devices: []string{"/dev/kvm"}},
		"mount outside":   {Mounts: []backend.ContainerMount{{HostPath: outside, ContainerPath: "/x"}}},
		"symlink outside": {Mounts: []backend.ContainerMount{{HostPath: filepath.Join(allowed, "escape"), ContainerPath: "/x"}}},
		"etc":             {Mounts: []backend.ContainerMount{{HostPath: "/etc", ContainerPath: "/x"}}},
		"memory above":    {Memory: "64g"},
	} {
		spec.Owner = owner
		if _, err := b.CreateContainer(bg, spec); !errors.Is(err, backend.ErrPermission) {
			t.Errorf("%s: %v, want ErrPermission", name, err)
		}
	}
	for name, spec := range map[string]backend.ContainerSpec{
		"bad name":         {Name: "-x"},
		"session's prefix": {Name: "wai-test-abc"},
		"bad network":      {Network: "ns:/proc/1/ns/net"},
		"bad path":         {Mounts: []backend.ContainerMount{{HostPath: allowed, ContainerPath: "/proc/x"}}},
	} {
		spec.Owner = owner
		if _, err := b.CreateContainer(bg, spec); !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	// A mount from the allowed root is read-only (allow_write_mounts is
	// off), and ports publish on loopback only.
	info := create(t, b, backend.ContainerSpec{Owner: owner, Mounts: []backend.ContainerMount{{HostPath: allowed, ContainerPath: "/src"}},
		Network: "bridge", Ports: []backend.ContainerPort{{ContainerPort: 8000}}})
	ref := backend.ContainerRef{Owner: owner, Name: info.Name}
	if res := cexec(t, b, ref, "touch /src/f 2>&1; echo $?"); !strings.Contains(res.Stdout, "Read-only") {
		t.Errorf("mount not read-only: %+v", res)
	}
	cctx := onServiceCtx(t, b.svc)
	data, err := containers.Inspect(cctx, info.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	for port, binds := range data.HostConfig.PortBindings {
		for _, bd := range binds {
			if bd.HostIP != "127.0.0.1" {
				t.Errorf("port %s published on %q, want 127.0.0.1", port, bd.HostIP)
			}
		}
	}
	if len(data.HostConfig.PortBindings) == 0 {
		t.Errorf("no port published")
	}
	// Another user sees nothing of it.
	other := backend.ContainerRef{Owner: backend.ContainerOwner{User: "mallory", Session: owner.Session}, Name: info.Name}
	if _, err := b.ExecContainer(bg, other, backend.ExecRequest{Shell: "true"}); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("another user's exec: %v, want ErrNotFound", err)
	}
	if ls, _ := b.ListContainers(bg, other.Owner); len(ls) != 0 {
		t.Errorf("another user lists %+v", ls)
	}
	if _, err := b.DestroyContainer(bg, other, true); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("another user's destroy: %v, want ErrNotFound", err)
	}
}

func TestContainerExecTimeoutAndStopped(t *testing.T) {
	t.Parallel()
	b, _, owner := containerTest(t, nil)
	info := create(t, b, backend.ContainerSpec{Owner: owner, Network: "none"})
	ref := backend.ContainerRef{Owner: owner, Name: info.Name}
	res, err := b.ExecContainer(bg, ref, backend.ExecRequest{Shell: "echo start; sleep 60 & sleep 60", Timeout: 2 * time.Second})
	if err != nil || !res.TimedOut || res.ExitCode != backend.TimeoutExitCode || res.Stdout != "start\n" {
		t.Fatalf("timeout: %+v, %v", res, err)
	}
	if strings.Contains(res.Stderr, "wai:") {
		t.Fatalf("the kill was not clean: %q", res.Stderr)
	}
	if out := cexec(t, b, ref, "ps -eo args | grep -c '^sleep 60' || true"); strings.TrimSpace(out.Stdout) != "0" {
		t.Errorf("the timed-out tree still runs: %q", out.Stdout)
	}
	// What a command that ended by itself leaves running stays: a service
	// next to its code is what managed containers are for.
	cexec(t, b, ref, "sleep 300 >/dev/null 2>&1 &")
	if out := cexec(t, b, ref, "ps -eo args | grep -c '^sleep 300' || true"); strings.TrimSpace(out.Stdout) != "1" {
		t.Errorf("a background process did not survive its command: %q", out.Stdout)
	}
	cexec(t, b, ref, "echo kept > ~/k.txt")
	cctx := onServiceCtx(t, b.svc)
	if err := containers.Stop(cctx, info.Name, new(containers.StopOptions).WithTimeout(0)); err != nil {
		t.Fatal(err)
	}
	// The advice keeps its files: start it, never destroy and recreate.
	if _, err := b.ExecContainer(bg, ref, backend.ExecRequest{Shell: "true"}); !errors.Is(err, backend.ErrUnavailable) ||
		!strings.Contains(err.Error(), "not running") || !strings.Contains(err.Error(), "operation start") || strings.Contains(err.Error(), "destroy") {
		t.Errorf("exec in a stopped container: %v, want ErrUnavailable saying it is not running and to start it", err)
	}
	if st, err := b.StartContainer(bg, ref); err != nil || !st.Running {
		t.Fatalf("StartContainer: %+v, %v", st, err)
	}
	if out := cexec(t, b, ref, "cat ~/k.txt"); out.Stdout != "kept\n" {
		t.Errorf("after start: %+v; want the file written before the stop", out)
	}
	if st, err := b.StopContainer(bg, ref, true); err != nil || st.Running || st.State != "exited" {
		t.Errorf("StopContainer: %+v, %v; want it exited and kept", st, err)
	}
	if _, err := b.StopContainer(bg, backend.ContainerRef{Owner: backend.ContainerOwner{User: "someone-else"}, Name: info.Name}, true); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("another user's stop: %v, want ErrNotFound", err)
	}
	// The session sweep never mistakes a managed container for a session's.
	ls, _ := list(bg, b.svc, time.Now())
	for _, c := range ls {
		if c.Name == info.Name {
			t.Errorf("the session listing includes managed container %s", c.Name)
		}
	}
}

func TestContainerPreflight(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	pf, err := b.ContainersPreflight(bg)
	if err != nil || !pf.Ready || len(pf.Checks) < 3 {
		t.Errorf("ContainersPreflight = %+v, %v", pf, err)
	}
	// The gpu check says whether there is one, and never makes the host
	// not ready.
	gpu := pf.Checks[len(pf.Checks)-1]
	if hasGPU := detectGPU(DefaultCDISpecDirs).CDISpec != ""; gpu.Name != "gpu" || !gpu.Optional || gpu.Passed != hasGPU {
		t.Errorf("gpu check %+v; want an optional check, passed = %v", gpu, hasGPU)
	}
	b2 := newTestBackend(t, backend.Limits{}, map[string]any{"containers": map[string]any{"image": "localhost/wai-no-such-image:x"}})
	pf, err = b2.ContainersPreflight(bg)
	if err != nil || pf.Ready || !strings.Contains(pf.Summary, "not ready") {
		t.Errorf("with a missing image: %+v, %v", pf, err)
	}
}

func TestContainerGCByLabel(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	ws, err := b.Open(bg, backend.WorkspaceSpec{Session: session("gc")})
	if err != nil {
		t.Fatal(err)
	}
	w := ws.(*Workspace)
	owner := backend.ContainerOwner{Session: w.session}
	t.Cleanup(func() { _, _ = b.DestroyContainers(context.WithoutCancel(bg), owner, false) })
	temp := create(t, b, backend.ContainerSpec{Owner: owner, Network: "none"})
	kept := create(t, b, backend.ContainerSpec{Owner: owner, Network: "none", Persistent: true})
	mine := func(s string) bool { return s == owner.Session }
	var rep backend.GCReport
	b.gcContainers(bg, backend.GCOptions{Match: mine}, &rep)
	if len(rep.Removed) != 0 {
		t.Fatalf("gc removed containers of a live session: %+v", rep.Removed)
	}
	if h, want := b.SessionHolder(owner.Session), backend.CurrentHolder().String(); h != want {
		t.Errorf("the holder of a live session: %q, want %q (wai ps and wai rm go by it)", h, want)
	}
	// The session ends without its kernel cleaning up (a crash): its
	// containers are orphans found by label.
	if err := ws.Close(bg); err != nil {
		t.Fatal(err)
	}
	if h := b.SessionHolder(owner.Session); h != "" {
		t.Errorf("the holder of a closed session: %q, want none", h)
	}
	rep = backend.GCReport{}
	b.gcContainers(bg, backend.GCOptions{Match: mine}, &rep)
	if len(rep.Removed) != 1 || rep.Removed[0].Name != temp.Name || len(rep.Kept) != 1 || rep.Kept[0].Name != kept.Name {
		t.Errorf("gc = removed %+v kept %+v; want %s removed, persistent %s kept", rep.Removed, rep.Kept, temp.Name, kept.Name)
	}
	rep = backend.GCReport{}
	b.gcContainers(bg, backend.GCOptions{Match: mine, All: true}, &rep)
	if len(rep.Removed) != 1 || rep.Removed[0].Name != kept.Name {
		t.Errorf("gc --all = removed %+v, want %s", rep.Removed, kept.Name)
	}
}

func TestContainerOtherConfigInvisible(t *testing.T) {
	t.Parallel()
	b, _, owner := containerTest(t, nil)
	info := create(t, b, backend.ContainerSpec{Owner: owner, Network: "none"})
	other := newTestBackend(t, backend.Limits{}, nil) // another state directory
	if ls, err := other.ListManagedContainers(bg); err != nil || len(ls) != 0 {
		t.Errorf("another configuration lists %+v, %v", ls, err)
	}
	if _, err := other.DestroyContainer(bg, backend.ContainerRef{Owner: owner, Name: info.Name}, true); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("another configuration's destroy: %v, want ErrNotFound", err)
	}
	var rep backend.GCReport
	other.gcContainers(bg, backend.GCOptions{All: true}, &rep)
	if len(rep.Removed) != 0 {
		t.Errorf("another configuration's gc removed %+v", rep.Removed)
	}
}

func TestContainerHintForm(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]string{
		DefaultURL():                 "podman",
		"tcp://10.0.0.5:8080":        "podman --url tcp://10.0.0.5:8080",
		"ssh://me@box/run/p.sock":    "podman --url ssh://me@box/run/p.sock --identity /home/me/.ssh/id",
		"unix:///srv/my socket.sock": "podman --url 'unix:///srv/my socket.sock'",
	} {
		b := &Backend{cfg: Config{URL: url}}
		if strings.HasPrefix(url, "ssh:") {
			b.cfg.Identity = "/home/me/.ssh/id"
		}
		if got := b.podmanCLI(); got != want {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
	}
}

// BenchmarkContainerLifecycle is one managed container's create (with a
// forwarded file), one exec and a forced destroy, against the real service.
func BenchmarkContainerLifecycle(b *testing.B) {
	be := newTestBackend(b, backend.Limits{}, nil)
	owner := backend.ContainerOwner{Session: session("bench")}
	for b.Loop() {
		info, err := be.CreateContainer(bg, backend.ContainerSpec{Owner: owner, Network: "none",
			Files: []backend.ContainerFile{{Path: ".gitconfig", Data: []byte("[user]\n\tname = B\n")}}})
		if err != nil {
			b.Fatal(err)
		}
		ref := backend.ContainerRef{Owner: owner, Name: info.Name}
		if res, err := be.ExecContainer(bg, ref, backend.ExecRequest{Shell: "git config user.name"}); err != nil || res.Stdout != "B\n" {
			b.Fatalf("exec: %+v, %v", res, err)
		}
		if _, err := be.DestroyContainer(bg, ref, true); err != nil {
			b.Fatal(err)
		}
	}
}
