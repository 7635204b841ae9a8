//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"

	"github.com/containers/podman/v5/pkg/bindings"
	"golang.org/x/crypto/ssh"
)

// An ssh:// connection from the bindings is one SSH connection, made when
// the bindings connection is, through which every request and attach opens
// a channel to the service's socket. When that SSH connection dies (sshd
// restarted, the network cut, the machine rebooted), every later channel
// fails at once, and dropping the bindings connection after the first
// failure would cost the caller that call. Instead the transport's dialer
// is wrapped: a channel that cannot be opened because the connection is
// gone (not one the server refused) makes it dial a new SSH connection (checked with a ping, as any new connection is) and open the
// channel through that, so the call that finds the connection dead is the
// one that repairs it.
type sshRedialer struct {
	svc *service

	mu   sync.Mutex
	gen  int // counts redials, so concurrent failures redial once
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// healOnRedial installs an sshRedialer on conn's transport (ssh:// only).
func (s *service) healOnRedial(conn context.Context) {
	tr := transportOf(conn)
	if tr == nil {
		return
	}
	r := &sshRedialer{svc: s, dial: tr.DialContext}
	tr.DialContext = r.dialContext
	// No HTTP keep-alive: every request opens its own channel, so none is
	// sent down a pooled channel of a connection that has died. Such a
	// request fails even though the transport retries it on a new
	// connection: the bindings' request bodies cannot be replayed (the
	// retry sends "ContentLength=454 with Body length 0"). A channel open
	// is one round trip on the existing SSH connection.
	tr.DisableKeepAlives = true
	tr.CloseIdleConnections()
}

func transportOf(conn context.Context) *http.Transport {
	c, err := bindings.GetClient(conn)
	if err != nil || c.Client == nil {
		return nil
	}
	tr, ok := c.Client.Transport.(*http.Transport)
	if !ok || tr.DialContext == nil {
		return nil
	}
	return tr
}

func (r *sshRedialer) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	r.mu.Lock()
	dial, gen := r.dial, r.gen
	r.mu.Unlock()
	c, err := dial(ctx, network, addr)
	var refused *ssh.OpenChannelError
	if err == nil || ctx.Err() != nil || errors.As(err, &refused) {
		// A channel the server refused (no socket there, forwarding not
		// allowed) came over a live connection: a new one would be refused
		// the same, and the old one would stay open, unused.
		return c, err
	}
	r.mu.Lock()
	if r.gen == gen { // nobody has redialled since this dial was taken
		fresh, ferr := r.svc.dial(ctx)
		if ferr != nil {
			r.mu.Unlock()
			return nil, err // the original failure; the caller reports it
		}
		if tr := transportOf(fresh); tr != nil {
			r.dial = tr.DialContext
			r.gen++
		}
	}
	dial = r.dial
	r.mu.Unlock()
	return dial(ctx, network, addr)
}
