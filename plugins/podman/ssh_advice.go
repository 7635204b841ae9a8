//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"syscall"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshAdvice says, for a service at an ssh:// URL that could not be
// reached, what failed and what to check. Each cause is told apart by the
// error the SSH client returned: nothing listening, the key refused, the
// host key not the one in known_hosts, or the login working but the
// service's socket not reachable behind it.
func sshAdvice(rawURL, identity string, err error) string {
	u, perr := url.Parse(rawURL)
	if perr != nil || u.Scheme != "ssh" {
		return ""
	}
	host, sock := u.Host, u.Path
	if !strings.Contains(host, ":") {
		host += ":22"
	}
	key := "the SSH agent's keys ($SSH_AUTH_SOCK)"
	if identity != "" {
		key = "the identity key " + identity
	}
	login := "the service is reached through sshd at " + host + " as user " + u.User.Username() + " with " + key + ", then its socket " + sock
	var ke *knownhosts.KeyError
	var oce *ssh.OpenChannelError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused: nothing listens on " + host + ". Check that sshd runs on that machine and listens on that port (" + login + ")"
	case errors.As(err, &ke) && len(ke.Want) > 0:
		return "host key mismatch: " + host + " presented a key other than the one in ~/.ssh/known_hosts of the user wai runs as. " +
			"If the machine was reinstalled, replace its entry (ssh-keygen -R '[" + u.Hostname() + "]:" + u.Port() + "', then connect once with ssh and check the fingerprint); otherwise do not connect"
	case strings.Contains(err.Error(), "unable to authenticate"):
		return "authentication failed: sshd at " + host + " refused " + key + " for user " + u.User.Username() +
			". Check the [backends.podman] identity key (or $CONTAINER_SSHKEY) and that its public half is in that user's authorized_keys on the remote"
	case errors.As(err, &oce), strings.Contains(err.Error(), "open failed"):
		return "logged in to " + host + ", but the Podman socket " + sock + " could not be opened there. Check that `podman system service --time=0 unix://" + sock +
			"` runs on the remote (or its podman.socket unit is started), that the socket path is right, and that sshd allows forwarding to Unix sockets (AllowStreamLocalForwarding)"
	case strings.Contains(err.Error(), "i/o timeout"), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, syscall.ETIMEDOUT), errors.Is(err, syscall.EHOSTUNREACH):
		return "no answer from " + host + ". Check the host name, the port and any firewall between here and there (" + login + ")"
	}
	return "check that sshd runs on the remote and accepts " + key + ", and that `podman system service` answers on " + sock + " there (" + login + ")"
}
