// Package podmansvc runs a Podman API service of a test's own, on a
// socket of its own: for the tests that stop and restart the service under
// a live session, or need one configured apart from the machine's (another
// default runtime). Stopping it never disturbs the service the other tests
// share. The CLI's tests and plugins/podman's both use it.
package podmansvc

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wai-dev/wai/internal/syncbuf"
)

// startWithin bounds how long a starting service may take to accept a
// connection: generous, because CI starts it with both cores busy.
const startWithin = 30 * time.Second

// stopWithin is how long a service gets to end after SIGTERM before it is
// killed.
const stopWithin = 10 * time.Second

// Service is one `podman system service` on Sock.
type Service struct {
	Sock   string
	t      testing.TB
	global []string // podman's options before "system service"
	cmd    *exec.Cmd
	out    syncbuf.Buffer
}

// Require fails the test on CI, and skips it elsewhere, when a program
// it needs is not on PATH.
func Require(t testing.TB, bins ...string) {
	t.Helper()
	for _, bin := range bins {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed for this test on CI: %v", bin, err)
			}
			t.Skipf("%s is not installed: %v", bin, err)
		}
	}
}

// Run starts `podman GLOBAL... system service --time=0` on a fresh socket
// and returns once the socket accepts connections. The service stops with
// the test.
func Run(t testing.TB, global ...string) *Service {
	t.Helper()
	Require(t, "podman")
	// Not t.TempDir: a unix socket path is limited to 108 bytes, and a
	// long test name would pass it.
	dir, err := os.MkdirTemp("", "wai-svc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &Service{Sock: filepath.Join(dir, "podman.sock"), t: t, global: global}
	// Registered before the first start, so it runs after the test's own
	// cleanups, which may still need the service.
	t.Cleanup(s.Stop)
	s.Start()
	return s
}

// URL is the service's address as wai's config and CONTAINER_HOST take it.
func (s *Service) URL() string { return "unix://" + s.Sock }

// Start starts the service again on the same socket after Stop.
func (s *Service) Start() {
	s.t.Helper()
	if s.cmd != nil {
		s.t.Fatal("podmansvc: Start on a running service")
	}
	cmd := exec.Command("podman", slices.Concat(s.global, []string{"system", "service", "--time=0", s.URL()})...)
	cmd.Stdout, cmd.Stderr = &s.out, &s.out
	// A group of its own: a signal to the test's group leaves it be, and
	// only Stop ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting podman system service: %v", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(startWithin)
	for {
		if c, err := net.Dial("unix", s.Sock); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			s.Stop()
			s.t.Fatalf("the podman service on %s did not come up within %s: %s", s.Sock, startWithin, strings.TrimSpace(s.out.String()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop ends the service (SIGTERM, then SIGKILL after stopWithin) and
// removes its socket, so a client sees no service rather than a stale
// socket. A stopped service's Stop does nothing.
func (s *Service) Stop() {
	if s.cmd == nil {
		return
	}
	cmd := s.cmd
	s.cmd = nil
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopWithin):
		_ = cmd.Process.Kill()
		<-done
	}
	os.Remove(s.Sock)
}
