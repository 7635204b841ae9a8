//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// The advice for causes the loopback sshd cannot produce on demand (a
// timeout, a channel refused by the server), and that every ssh:// error
// names the host, the user and the key. The real failures are tested in
// remote_test.go against the test sshd.
func TestSSHAdvice(t *testing.T) {
	t.Parallel()
	const url = "ssh://core@box.example:2222/run/user/1000/podman/podman.sock"
	for _, c := range []struct {
		name     string
		identity string
		err      error
		want     []string
	}{
		{"timeout", "/k", fmt.Errorf("dialling: %w", context.DeadlineExceeded),
			[]string{"no answer from box.example:2222", "firewall", "as user core", "the identity key /k"}},
		{"channel refused", "", &ssh.OpenChannelError{Reason: ssh.ConnectionFailed, Message: "open failed"},
			[]string{"logged in to box.example:2222", "/run/user/1000/podman/podman.sock could not be opened",
				"podman system service --time=0 unix:///run/user/1000/podman/podman.sock", "AllowStreamLocalForwarding"}},
		{"unknown", "", errors.New("something else"),
			[]string{"sshd runs on the remote", "the SSH agent's keys", "/run/user/1000/podman/podman.sock"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := sshAdvice(url, c.identity, c.err)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q: %s", w, got)
				}
			}
		})
	}
	if got := sshAdvice("unix:///run/podman/podman.sock", "", errors.New("x")); got != "" {
		t.Errorf("advice for a unix URL: %q", got)
	}
	if got := sshAdvice("ssh://root@host/run/podman/podman.sock", "", errors.New("x")); !strings.Contains(got, "host:22") {
		t.Errorf("a URL without a port is port 22: %q", got)
	}
}
