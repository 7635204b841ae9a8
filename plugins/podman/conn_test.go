//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// What a service that cannot be reached says, by cause. The causes are
// built here because root, which runs the tests, is never refused a
// socket, and a machine with no podman cannot be arranged otherwise.
func TestUnreachableAdvice(t *testing.T) {
	dir := t.TempDir()
	present := filepath.Join(dir, "present.sock")
	if err := os.WriteFile(present, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.sock")
	dial := func(e error) error {
		return fmt.Errorf("unable to connect to Podman socket: %w", &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", e)})
	}
	for _, c := range []struct {
		name, sock, path string
		err              error
		want             []string
	}{
		{"refused", present, "", dial(syscall.EACCES),
			[]string{"permission denied on the Podman socket " + present, "run wai as the socket's owner", "systemctl --user start podman.socket", "[backends.podman] url"}},
		{"not listening", present, "", dial(syscall.ECONNREFUSED),
			[]string{"the Podman service does not answer", "scripts/setup-podman.sh", "podman system service --time=0 unix://" + present}},
		{"no podman, no socket", missing, t.TempDir(), dial(syscall.ENOENT),
			[]string{"Podman is not installed here", "no service socket at " + missing, "apt-get install podman"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.path != "" {
				t.Setenv("PATH", c.path)
			}
			err := newService("unix://"+c.sock, "").unreachable("connect", c.err)
			if !errors.Is(err, backend.ErrUnavailable) || !errors.Is(err, c.err) {
				t.Errorf("want ErrUnavailable wrapping the cause, got %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("lacks %q: %v", w, err)
				}
			}
		})
	}
}
