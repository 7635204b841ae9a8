//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"net"
	"net/http"
	"sync"

	"github.com/containers/podman/v5/pkg/bindings"
)

// An ssh:// connection from the bindings is one SSH connection, made when
// the bindings connection is, through which every request and attach opens
// a channel to the service's socket. When that SSH connection dies (sshd
// restarted, the network cut, the machine rebooted), every later channel
// fails at once, and dropping the bindings connection after the first
// failure would cost the caller that call. Instead the transport's dialer
// is wrapped: a channel that cannot be opened makes it dial a new SSH
// connection (checked with a ping, as any new connection is) and open the
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
	if err == nil || ctx.Err() != nil {
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
