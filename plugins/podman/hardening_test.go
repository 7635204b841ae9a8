//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
)

// TestHardening checks the sandbox from inside the container, where it
// counts, and the container's configuration from the service's side.
func TestHardening(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	w := openTest(t, b, false)
	probe := func(script string) string {
		t.Helper()
		res := sh(t, w, script)
		if res.ExitCode != 0 {
			t.Fatalf("%s: exit %d, stderr %q", script, res.ExitCode, res.Stderr)
		}
		return strings.TrimSpace(res.Stdout)
	}
	if got := probe("id -u; id -g"); got != "65534\n65534" {
		t.Errorf("id -u; id -g = %q, want 65534 twice", got)
	}
	// Only loopback: the first two lines of /proc/net/dev are headers.
	var ifaces []string
	for _, line := range strings.Split(probe("cat /proc/net/dev"), "\n")[2:] {
		name, _, _ := strings.Cut(line, ":")
		ifaces = append(ifaces, strings.TrimSpace(name))
	}
	if len(ifaces) != 1 || ifaces[0] != "lo" {
		t.Errorf("network interfaces %q, want only lo", ifaces)
	}
	// Memory: 1 GiB, and memory+swap the same (no swap), cgroup v1 or v2.
	mem := probe("cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max")
	if mem != strconv.Itoa(1<<30) {
		t.Errorf("memory limit %s, want %d", mem, 1<<30)
	}
	swap := probe("cat /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.swap.max 2>/dev/null || echo unsupported")
	if swap != strconv.Itoa(1<<30) && swap != "0" && swap != "unsupported" {
		t.Errorf("memory+swap limit %s, want %d (v1) or swap.max 0 (v2)", swap, 1<<30)
	}
	pids := probe("cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max")
	if pids != "256" {
		t.Errorf("pids.max %s, want 256", pids)
	}
	status := probe("grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status")
	for _, want := range []string{"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1"} {
		if !strings.Contains(status, want) {
			t.Errorf("/proc/self/status lacks %q:\n%s", want, status)
		}
	}
	if got := probe("ulimit -n; ulimit -Hn"); got != "1024\n1024" {
		t.Errorf("nofile soft/hard %q, want 1024 1024", got)
	}
	// The root is read-only; /workspace and /tmp are the writable places.
	res := sh(t, w, "touch /etc/wai-probe")
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, "Read-only file system") {
		t.Errorf("touch /etc/wai-probe: exit %d stderr %q, want a read-only file system error", res.ExitCode, res.Stderr)
	}
	for _, dir := range []string{"/usr", "/var", "/run", "/"} {
		if res := sh(t, w, "touch "+dir+"/wai-probe"); res.ExitCode == 0 {
			t.Errorf("%s is writable", dir)
		}
	}
	if got := probe("touch /workspace/w /tmp/w && echo ok; findmnt -n -o FSTYPE /tmp 2>/dev/null || grep ' /tmp ' /proc/mounts | cut -d' ' -f3"); !strings.HasPrefix(got, "ok\ntmpfs") {
		t.Errorf("/workspace and /tmp: %q, want writable and /tmp a tmpfs", got)
	}
	// PID 1 is the init that reaps orphans.
	if got := probe("tr '\\0' ' ' </proc/1/cmdline"); !strings.Contains(got, "init") || !strings.Contains(got, "sleep infinity") {
		t.Errorf("PID 1 is %q, want podman's init running sleep infinity", got)
	}
	// Files the host side writes belong to the container user, who can
	// change them; files it writes are readable on the host.
	if _, err := w.FS().Write(bg, backend.WriteRequest{Path: "from-host/f.txt", Content: "host\n"}); err != nil {
		t.Fatal(err)
	}
	if got := probe("stat -c '%u:%g' from-host from-host/f.txt; echo more >>from-host/f.txt && cat from-host/f.txt; echo c >from-host/new"); got != "65534:65534\n65534:65534\nhost\nmore" {
		t.Errorf("container's view of host-written files: %q", got)
	}
	fi, err := os.Stat(filepath.Join(w.Dir(), "from-host", "new"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 {
		t.Errorf("a file the container wrote is owned by %d on the host, want 65534", st.Uid)
	}

	// The service's side of the same configuration.
	cctx, id := onService(t, b, w)
	data, err := containers.Inspect(cctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := data.HostConfig
	if !hc.ReadonlyRootfs || !hc.Init || hc.Memory != 1<<30 || hc.MemorySwap != 1<<30 ||
		hc.PidsLimit != 256 || hc.CpuQuota != 100000 || hc.NetworkMode != "none" || len(data.EffectiveCaps) != 0 {
		t.Errorf("inspect: readonly %v init %v memory %d swap %d pids %d cpu quota %d network %q caps %v",
			hc.ReadonlyRootfs, hc.Init, hc.Memory, hc.MemorySwap, hc.PidsLimit, hc.CpuQuota, hc.NetworkMode, data.EffectiveCaps)
	}
	if !strings.Contains(strings.Join(hc.SecurityOpt, ","), "no-new-privileges") {
		t.Errorf("inspect: security options %v lack no-new-privileges", hc.SecurityOpt)
	}
	if data.Config.Labels[labelManaged] != "true" || data.Config.Labels[labelSession] != w.session {
		t.Errorf("labels %v", data.Config.Labels)
	}
	var writable []string
	for _, m := range data.Mounts {
		if m.RW {
			writable = append(writable, m.Destination)
		}
	}
	if len(writable) != 1 || writable[0] != ContainerWorkspace {
		t.Errorf("writable bind mounts %v, want only %s", writable, ContainerWorkspace)
	}
}

// TestCwdEscapes: the working directory is resolved on the host side,
// chroot-style, before the container sees it.
func TestCwdEscapes(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	w := openTest(t, b, false)
	if err := os.Symlink("/etc", filepath.Join(w.Dir(), "etc-link")); err != nil {
		t.Fatal(err)
	}
	// An absolute symlink resolves inside the workspace: /workspace/etc
	// does not exist, so the request is refused before anything runs.
	for _, cwd := range []string{"etc-link", "../../etc", "/../../etc", "no-such-dir"} {
		_, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"pwd"}, Cwd: cwd})
		if !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("cwd %q: error %v, want ErrInvalid", cwd, err)
		}
	}
	if _, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}, Env: map[string]string{markerVar: "x"}}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("env %s: error %v, want ErrInvalid (it is reserved)", markerVar, err)
	}
}

// TestArgvRunsPrograms: an argv runs the program it names, not a shell
// builtin of that name.
func TestArgvRunsPrograms(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	w := openTest(t, b, false)
	res := run(t, w, backend.ExecRequest{Argv: []string{"echo", `a\nb`}})
	if res.Stdout != "a\\nb\n" {
		t.Errorf("argv echo 'a\\nb' printed %q: a shell builtin ran instead of /bin/echo", res.Stdout)
	}
	res = run(t, w, backend.ExecRequest{Argv: []string{"a=b"}})
	if res.ExitCode != 127 {
		t.Errorf("argv [a=b]: exit %d, want 127 (no such program), not a variable assignment", res.ExitCode)
	}
}

// TestUserNamespacesDenied: a command must not make a user namespace, in
// which it would hold every capability over namespaces of its own (mount,
// network, …): the seccomp profile refuses unshare and clone with
// CLONE_NEWUSER, clone3, and setns. Ordinary commands, threads and
// subshells still work (glibc falls back from clone3 to clone).
func TestUserNamespacesDenied(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	w := openTest(t, b, false)
	for _, cmd := range []string{"unshare -Urm true", "unshare -U true", "unshare -Ur --fork true"} {
		res := sh(t, w, cmd)
		if res.ExitCode == 0 {
			t.Errorf("%s succeeded inside the container: user namespaces must be denied", cmd)
		} else if !strings.Contains(res.Stderr, "Operation not permitted") {
			t.Errorf("%s: exit %d, stderr %q; want \"Operation not permitted\"", cmd, res.ExitCode, res.Stderr)
		}
	}
	// Entering a namespace is refused as well (here the container's own,
	// the only one there is to enter).
	if res := sh(t, w, "nsenter --user=/proc/1/ns/user true"); res.ExitCode == 0 {
		t.Errorf("nsenter into a user namespace succeeded")
	}
	// Processes, threads and pipelines still work.
	script := `sh -c 'echo sub' | cat; (sleep 0.1 & wait; echo bg) ; ` +
		`python3 -c 'import threading; t = threading.Thread(target=print, args=("thread",)); t.start(); t.join()'; ` +
		`python3 -c 'import os, subprocess; print(subprocess.run(["echo", "child"], capture_output=True, text=True).stdout.strip())'`
	res := sh(t, w, script)
	if got := strings.TrimSpace(res.Stdout); res.ExitCode != 0 || got != "sub\nbg\nthread\nchild" {
		t.Errorf("ordinary commands: exit %d stdout %q stderr %q", res.ExitCode, got, res.Stderr)
	}
}
