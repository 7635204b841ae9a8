//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	sdktests "github.com/wai-dev/wai/sdk-tests"
)

// remoteConformance runs the sdk-tests suites against the Podman service
// reached over ssh:// through a real sshd on loopback (scripts/setup-sshd.sh).
//
// Every API call, exec and attach stream goes over the ssh connection, and
// the workspace is a volume on the service's side, its files served by
// wai-agent in the container: each workspace is checked to leave no
// directory on wai's side, so the suites prove that nothing relies on a
// path shared with the service (which here happens to be this machine).
func remoteConformance(s testSSHD) sdktests.Backend {
	caps := conformance.Caps
	caps.HostDir = nil // there is none: planting goes through commands
	caps.Reopen = reopener(remoteExtra(s, nil))
	caps.Containers = func(t *testing.T) (backend.Containers, backend.ContainerOwner) {
		return newRemoteBackend(t, s, backend.Limits{}), backend.ContainerOwner{Session: session("ssh")}
	}
	return sdktests.Backend{
		Name: "podman",
		Open: func(t *testing.T, l backend.Limits) backend.Workspace {
			ws, err := newRemoteBackend(t, s, l).Open(t.Context(), backend.WorkspaceSpec{Session: session("ssh")})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if w := ws.(*Workspace); w.volume == "" {
				t.Fatalf("an ssh:// backend opened a %s workspace, not a volume", w.b.cfg.Workspace)
			}
			t.Cleanup(func() { noLocalWorkspace(t, ws.(*Workspace)) })
			return ws
		},
		Caps:     caps,
		Watchdog: conformance.Watchdog,
	}
}

func TestRemoteShellConformance(t *testing.T) {
	t.Parallel()
	if s := needSSHD(t); inHome(t, s.home()) {
		sdktests.RunShell(t, remoteConformance(s))
	}
}

func TestRemoteFilesystemConformance(t *testing.T) {
	t.Parallel()
	if s := needSSHD(t); inHome(t, s.home()) {
		sdktests.RunFilesystem(t, remoteConformance(s))
	}
}

// The containers agents manage, over ssh:// (their owner session on a
// volume workspace).
func TestRemoteContainersConformance(t *testing.T) {
	t.Parallel()
	if s := needSSHD(t); inHome(t, s.home()) {
		sdktests.RunContainers(t, remoteConformance(s))
	}
}

// A command whose ssh connection is cut fails with ErrUnavailable saying
// so, and the next command dials again and succeeds: the backend is not
// left holding a dead connection.
func TestRemoteConnectionCutRecovers(t *testing.T) {
	s := needSSHD(t)
	if !inHome(t, s.home()) {
		return
	}
	w := openTest(t, newRemoteBackend(t, s, backend.Limits{}), false)
	sh(t, w, "true") // the container runs; what follows is one exec

	done := make(chan error, 1)
	go func() {
		_, err := w.Shell().Execute(bg, backend.ExecRequest{Shell: "touch started; sleep 60", Timeout: 2 * time.Minute})
		done <- err
	}()
	waitUntil(t, "the command to start", func() bool {
		_, err := w.FS().Stat(bg, "started")
		return err == nil
	})
	if n := s.killSessions(t); n == 0 {
		t.Fatal("no ssh connection to the test sshd to cut")
	}
	select {
	case err := <-done:
		if !errors.Is(err, backend.ErrUnavailable) {
			t.Fatalf("cut connection: want ErrUnavailable, got %v", err)
		}
		t.Logf("cut connection: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the command did not return after its ssh connection was cut")
	}
	res := sh(t, w, "echo again")
	if res.ExitCode != 0 || strings.TrimSpace(res.Stdout) != "again" {
		t.Fatalf("next command: %+v", res)
	}
	// The cut command was stopped, not left running unattended.
	if res := sh(t, w, "ps -eo args | grep -c '^sleep 60' || true"); strings.TrimSpace(res.Stdout) != "0" {
		t.Errorf("the cut command still runs: %q %q", res.Stdout, res.Stderr)
	}
}

// An ssh connection that dies between commands (sshd restarted, network
// cut) heals: at most the first command after it fails, as unavailable,
// when it was sent on the agent's cut stream; the next ones succeed.
func TestRemoteIdleCutHeals(t *testing.T) {
	s := needSSHD(t)
	if !inHome(t, s.home()) {
		return
	}
	w := openTest(t, newRemoteBackend(t, s, backend.Limits{}), false)
	sh(t, w, "true")
	if n := s.killSessions(t); n == 0 {
		t.Fatal("no ssh connection to the test sshd to cut")
	}
	// The in-container agent's stream rode the cut connection. A command
	// sent on it before the host saw the stream end fails as unavailable
	// (it may or may not have started, and is never run twice); the
	// calls after it run on a new agent over a new connection.
	res, err := w.Shell().Execute(bg, backend.ExecRequest{Shell: "echo again"})
	if err != nil && !(errors.Is(err, backend.ErrUnavailable) && strings.Contains(err.Error(), "agent")) {
		t.Fatalf("command 1 after the cut: %v %+v", err, res)
	}
	if err == nil && strings.TrimSpace(res.Stdout) != "again" {
		t.Fatalf("command 1 after the cut: %+v", res)
	}
	for i := range 2 {
		res, err := w.Shell().Execute(bg, backend.ExecRequest{Shell: "echo again"})
		if err != nil || strings.TrimSpace(res.Stdout) != "again" {
			t.Fatalf("command %d after the cut: %v %+v", i+2, err, res)
		}
	}
}

// What connecting says when the ssh side fails, by cause, against the real
// sshd: nothing listening, a key it refuses, no service socket behind the
// login (and, below, a host key that is not the one in known_hosts). Each error names the URL, what failed and what to
// check.
func TestRemoteUnreachableAdvice(t *testing.T) {
	t.Parallel()
	s := needSSHD(t)
	if !inHome(t, s.home()) {
		return
	}
	free := freeLoopbackPort(t)
	refused := fmt.Sprintf("ssh://root@127.0.0.1:%d/run/podman/podman.sock", free)
	noSock := fmt.Sprintf("ssh://root@127.0.0.1:%d/run/wai-test-no-such.sock", s.port)
	for _, c := range []struct {
		name, url, identity string
		want                []string
	}{
		{"nothing listens", refused, s.identity(),
			[]string{refused, "connection refused", "sshd runs", s.identity(), "/run/podman/podman.sock"}},
		{"wrong key", s.url(), s.wrongIdentity(),
			[]string{s.url(), "authentication failed", s.wrongIdentity(), "authorized_keys", "[backends.podman] identity"}},
		{"no socket there", noSock, s.identity(),
			[]string{noSock, "could not be opened", "podman system service", "/run/wai-test-no-such.sock"}},
	} {
		t.Run(c.name, func(t *testing.T) { checkConnectError(t, c.url, c.identity, c.want) })
	}
}

// A host key other than the one known_hosts holds is refused, never
// replaced: run with a HOME whose known_hosts pins another key.
func TestRemoteHostKeyMismatch(t *testing.T) {
	t.Parallel()
	s := needSSHD(t)
	home := os.Getenv(childHomeVar)
	if home == "" {
		home = t.TempDir()
		pub, err := os.ReadFile(s.wrongIdentity() + ".pub") // any other ed25519 key
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(pub))
		line := fmt.Sprintf("[127.0.0.1]:%d %s %s\n", s.port, f[0], f[1])
		if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".ssh", "known_hosts"), []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if !inHome(t, home) {
		return
	}
	checkConnectError(t, s.url(), s.identity(), []string{s.url(), "host key mismatch", "known_hosts", "ssh-keygen -R"})
	b, err := os.ReadFile(filepath.Join(home, ".ssh", "known_hosts"))
	if err != nil || strings.Count(string(b), "[127.0.0.1]") != 1 {
		t.Errorf("known_hosts changed after a mismatch: %q, %v", b, err)
	}
}

func checkConnectError(t *testing.T, url, identity string, want []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	svc := newService(url, identity)
	defer svc.drop()
	_, err := svc.ctx(ctx)
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Fatalf("want ErrUnavailable, got %v", err)
	}
	t.Logf("%v", err)
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("lacks %q: %v", w, err)
		}
	}
}

// freeLoopbackPort returns a loopback port nothing listens on (one the
// kernel just handed out and that was closed again).
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// Dialling an ssh:// service honours the caller's context even though the
// bindings' SSH dial does not: against a port that accepts and then says
// nothing, the call returns when the context ends, not after the bindings'
// own 40 s.
func TestRemoteDialHonoursContext(t *testing.T) {
	t.Parallel()
	s := needSSHD(t)
	if !inHome(t, s.home()) {
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent, until the test ends
		}
	}()
	url := fmt.Sprintf("ssh://root@%s/run/podman/podman.sock", l.Addr())
	ctx, cancel := context.WithTimeout(bg, time.Second)
	defer cancel()
	t0 := time.Now()
	_, err = newService(url, s.identity()).ctx(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the context's deadline, got %v", err)
	}
	if took := time.Since(t0); took > 30*time.Second {
		t.Fatalf("returned after %v: the dial did not honour the context", took)
	}
}

// Preflight against an ssh:// service passes every check, the last one
// being that volume workspaces work there (a file written by wai-agent is
// the one a command reads, and nothing lands on wai's side).
func TestRemotePreflight(t *testing.T) {
	t.Parallel()
	s := needSSHD(t)
	if !inHome(t, s.home()) {
		return
	}
	cfg := parsedTestConfig(t, remoteExtra(s, nil))
	checks := Preflight(bg, cfg)
	for _, c := range checks {
		t.Logf("%-30s %-4s %s", c.Name, c.Status, c.Detail)
		if c.Status == CheckFail {
			t.Errorf("check %s: %s (fix: %s)", c.Name, c.Detail, c.Fix)
		}
	}
	if last := checks[len(checks)-1]; last.Name != "workspace volume on service" || last.Status != CheckOK {
		t.Errorf("the last check is %+v, want the volume workspace passing", last)
	}
}

// With workspace = "bind" set explicitly over ssh://, preflight checks
// instead that the service sees wai's workspace directory at the same
// path: it does here (the service is on this machine).
func TestRemotePreflightBindShared(t *testing.T) {
	t.Parallel()
	s := needSSHD(t)
	if !inHome(t, s.home()) {
		return
	}
	cfg := parsedTestConfig(t, remoteExtra(s, map[string]any{"workspace": "bind"}))
	checks := Preflight(bg, cfg)
	last := checks[len(checks)-1]
	if last.Name != "workspace shared with service" || last.Status != CheckOK {
		t.Errorf("the last check is %+v, want the shared workspace passing", last)
	}
}
