//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.podman.io/storage/pkg/homedir"

	"github.com/wai-dev/wai/host/backend"
)

// testSSHD is the loopback sshd scripts/setup-sshd.sh runs for these
// tests: its own keys and config in dir, listening on 127.0.0.1:port only.
type testSSHD struct {
	dir  string
	port int
}

func (s testSSHD) identity() string      { return filepath.Join(s.dir, "id_ed25519") }
func (s testSSHD) wrongIdentity() string { return filepath.Join(s.dir, "id_ed25519_unauthorized") }
func (s testSSHD) home() string          { return filepath.Join(s.dir, "home") }
func (s testSSHD) pid() (int, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "sshd.pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// url is the ssh:// URL of the local Podman service through the test sshd.
func (s testSSHD) url() string {
	sock := os.Getenv("WAI_PODMAN_SOCKET")
	if sock == "" {
		sock = "/run/podman/podman.sock"
	}
	return fmt.Sprintf("ssh://root@127.0.0.1:%d%s", s.port, sock)
}

var (
	sshdOnce sync.Once
	sshd     testSSHD
	sshdErr  error
)

// needSSHD returns the test sshd, starting it with scripts/setup-sshd.sh
// (idempotent) when it does not answer and the test runs as root. Without
// it the test skips, except on CI, where that is a failure.
func needSSHD(t testing.TB) testSSHD {
	t.Helper()
	needPodman(t)
	sshdOnce.Do(func() { sshd, sshdErr = setUpSSHD() })
	if sshdErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the test sshd is required on CI (scripts/setup-podman.sh runs scripts/setup-sshd.sh): %v", sshdErr)
		}
		t.Skipf("no test sshd (run scripts/setup-sshd.sh as root): %v", sshdErr)
	}
	return sshd
}

func setUpSSHD() (testSSHD, error) {
	s := testSSHD{dir: os.Getenv("WAI_TEST_SSHD_DIR"), port: 42722}
	if s.dir == "" {
		s.dir = "/var/lib/wai-test/ssh"
	}
	if p := os.Getenv("WAI_TEST_SSHD_PORT"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return s, fmt.Errorf("WAI_TEST_SSHD_PORT=%q: %w", p, err)
		}
		s.port = n
	}
	if !sshAnswers(s.port) || !fileExists(s.identity()) {
		if os.Geteuid() != 0 {
			return s, fmt.Errorf("nothing answers on 127.0.0.1:%d and only root can start the test sshd", s.port)
		}
		out, err := exec.Command("../../scripts/setup-sshd.sh").CombinedOutput()
		if err != nil {
			return s, fmt.Errorf("scripts/setup-sshd.sh: %w\n%s", err, out)
		}
	}
	if known := filepath.Join(s.home(), ".ssh", "known_hosts"); !fileExists(known) {
		return s, fmt.Errorf("%s missing: re-run scripts/setup-sshd.sh", known)
	}
	return s, nil
}

// childHomeVar marks a test process started by inHome.
const childHomeVar = "WAI_TEST_SSH_HOME"

// inHome runs the calling test in a child process (inChild) whose HOME is
// home, and reports true in that child (which then runs the test's body)
// and false in the parent (which has passed on the child's output and
// verdict).
//
// Why a child: the Podman bindings check an ssh host key against
// $HOME/.ssh/known_hosts, append unknown hosts to it, and read HOME once per
// process, at start-up. These tests must neither trust an unknown key nor
// write to the user's ~/.ssh, so they run where HOME is a directory of
// their own: the test sshd's, whose known_hosts setup-sshd.sh wrote.
func inHome(t testing.TB, home string) bool {
	t.Helper()
	if os.Getenv(childHomeVar) == home {
		if h := homedir.Get(); h != home {
			t.Fatalf("the Podman bindings use HOME=%s, not %s", h, home)
		}
		return true
	}
	return inChild(t, "HOME="+home, childHomeVar+"="+home)
}

// childVar names the test a child process started by inChild runs.
const childVar = "WAI_TEST_CHILD"

// inChild runs the calling test alone in a child process of this test
// binary, with env added to its environment, and reports true in that
// child (which then runs the test's body) and false in the parent (which
// has passed on the child's output and verdict). Besides inHome, the shell
// suites use it: their bounded-memory check measures the heap of its
// process, which the other tests, all parallel, would grow.
func inChild(t testing.TB, env ...string) bool {
	t.Helper()
	if os.Getenv(childVar) == t.Name() {
		return true
	}
	// The child runs as many parallel subtests as this process would.
	args := []string{"-test.count=1", "-test.timeout=30m", "-test.parallel=" + testFlag("test.parallel", "2")}
	if b, ok := t.(*testing.B); ok {
		args = append(args, "-test.run=^$", "-test.bench=^"+regexp.QuoteMeta(b.Name())+"$", "-test.benchtime="+benchtime())
	} else {
		args = append(args, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$")
	}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), env...), childVar+"="+t.Name())
	out, err := cmd.CombinedOutput()
	passed := err == nil && (strings.Contains(string(out), "\nPASS\n") || strings.HasPrefix(string(out), "PASS\n"))
	if _, ok := t.(*testing.B); ok && passed {
		// The child's result lines, as this process would print them; the
		// parent itself then measures nothing (a benchmark function runs
		// several times, and one child run is enough).
		for _, l := range strings.SplitAfter(string(out), "\n") {
			if strings.HasPrefix(l, "Benchmark") && strings.Contains(l, "ns/op") {
				os.Stdout.WriteString(l)
			}
		}
		t.Skipf("measured in a child test process (results above)")
	}
	t.Logf("child test process (%s):\n%s", strings.Join(env, " "), out)
	if !passed {
		t.Fatalf("child test process failed: %v", err)
	}
	return false
}

// benchtime is the -test.benchtime this process runs with.
func benchtime() string { return testFlag("test.benchtime", "1s") }

// testFlag is the value of one of the testing package's flags, or def.
func testFlag(name, def string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return def
}

// sshAnswers reports whether an SSH server greets on 127.0.0.1:port.
func sshAnswers(port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 3*time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4)
	n, _ := c.Read(buf)
	return string(buf[:n]) == "SSH-"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// newRemoteBackend opens a backend that reaches the Podman service over
// ssh:// through the test sshd, with the workspaces an ssh:// service gets
// by default: volumes (without a size limit, which CI's ext4 volume
// storage cannot enforce).
func newRemoteBackend(t testing.TB, s testSSHD, l backend.Limits) *Backend {
	t.Helper()
	return newTestBackend(t, l, remoteExtra(s, nil))
}

// remoteExtra is the configuration of a backend on the test sshd, plus
// extra.
func remoteExtra(s testSSHD, extra map[string]any) map[string]any {
	m := map[string]any{"url": s.url(), "identity": s.identity(), "workspace_size": "0"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// killSessions kills the test sshd's per-connection processes (its
// children) that serve this process's connections, which cuts every ssh
// connection this test binary holds to it and none of another's
// (sshcut_test.go), and returns how many it killed. The listening sshd
// stays, so the next dial succeeds. Tests that call it run serially: a
// parallel test of this binary on ssh:// would be cut too.
func (s testSSHD) killSessions(t testing.TB) int {
	t.Helper()
	pid, err := s.pid()
	if err != nil {
		t.Fatalf("test sshd pid: %v", err)
	}
	procs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	conns := tcpTable()
	mine := ownClientPorts(conns, s.port)
	n := 0
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		child := filepath.Base(filepath.Dir(p))
		if !servesOneOf(conns, child, s.port, mine) {
			continue
		}
		cpid, _ := strconv.Atoi(child)
		if err := syscall.Kill(cpid, syscall.SIGKILL); err == nil {
			n++
		}
	}
	return n
}
