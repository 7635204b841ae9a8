//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/containers/podman/v5/pkg/bindings"
	"github.com/containers/podman/v5/pkg/errorhandling"

	"github.com/wai-dev/wai/host/backend"
)

// Built is true: this build talks to Podman.
const Built = true

// service is the connection to the Podman service. The bindings keep their
// connection in a context value; callCtx lets each call carry its own
// deadline and cancellation while reusing that connection. When the service
// stops answering, the connection is dropped and the next call dials again,
// so a restarted service (or a broken ssh tunnel) is picked up without
// reopening the backend.
type service struct {
	url, identity string

	mu      sync.Mutex
	conn    context.Context // holds the *bindings.Connection
	version string          // service API version, e.g. "4.3.1"
}

// connectTimeout bounds dialling and pinging the service.
const connectTimeout = 10 * time.Second

func newService(url, identity string) *service { return &service{url: url, identity: identity} }

// ctx returns a context for a bindings call: ctx's deadline and
// cancellation, the service connection's values.
func (s *service) ctx(ctx context.Context) (context.Context, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		dctx, cancel := context.WithTimeout(ctx, connectTimeout)
		defer cancel()
		conn, err := s.dial(dctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, s.unreachable("connect", err)
		}
		if strings.HasPrefix(s.url, "ssh://") {
			s.healOnRedial(conn)
		}
		s.conn = conn
		s.version = bindings.ServiceVersion(conn).String()
	}
	return callCtx{Context: ctx, conn: s.conn}, nil
}

// sshDialMu serializes dialling ssh:// services in this process: the
// bindings set a field of a package-level ssh_config value on every ssh
// dial (connection.go, podman v5.8.0), a data race when two backends or
// sessions dial at once.
var sshDialMu sync.Mutex

// dial connects to the service. The bindings' SSH dial ignores the
// context (its 40 s timeout covers the TCP connect only), so for ssh:// it
// runs aside and is abandoned when ctx ends. A connection it makes late
// has its idle HTTP connections closed; its SSH connection, which the
// bindings do not expose, stays until the remote drops it.
func (s *service) dial(ctx context.Context) (context.Context, error) {
	opts := bindings.Options{URI: s.url, Identity: s.identity}
	if !strings.HasPrefix(s.url, "ssh://") {
		return bindings.NewConnectionWithOptions(ctx, opts)
	}
	type dialled struct {
		conn context.Context
		err  error
	}
	done := make(chan dialled, 1)
	go func() {
		sshDialMu.Lock()
		defer sshDialMu.Unlock()
		conn, err := bindings.NewConnectionWithOptions(context.WithoutCancel(ctx), opts)
		done <- dialled{conn, err}
	}()
	select {
	case d := <-done:
		return d.conn, d.err
	case <-ctx.Done():
		go func() {
			if d := <-done; d.err == nil {
				closeIdle(d.conn)
			}
		}()
		return nil, fmt.Errorf("dialling %s: %w", s.url, ctx.Err())
	}
}

// closeIdle closes the idle connections of a bindings connection.
func closeIdle(conn context.Context) {
	if c, err := bindings.GetClient(conn); err == nil && c.Client != nil {
		c.Client.CloseIdleConnections()
	}
}

// apiVersion is the service's API version ("" before the first call).
func (s *service) apiVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// client returns the bindings connection of a call context.
func client(ctx context.Context) (*bindings.Connection, error) {
	return bindings.GetClient(ctx)
}

// drop forgets the connection so that the next call dials again.
func (s *service) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		closeIdle(s.conn)
	}
	s.conn = nil
}

// callCtx takes its deadline, cancellation and values from the call's
// context, falling back to the connection context for the values the
// bindings store there.
type callCtx struct {
	context.Context
	conn context.Context
}

func (c callCtx) Value(key any) any {
	if v := c.conn.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}

// unreachable is the error for a service that does not answer. Without a
// podman program on a machine whose socket is missing too, the likely
// cause is that Podman was never installed, and starting a service is not
// advice that can be followed.
func (s *service) unreachable(op string, err error) error {
	if sock, local := strings.CutPrefix(s.url, "unix://"); local {
		if errors.Is(err, syscall.EACCES) {
			return &backend.Error{Kind: backend.ErrUnavailable, Op: op, Path: s.url,
				Msg: "permission denied on the Podman socket " + sock + ": run wai as the socket's owner (root for /run/podman/podman.sock), " +
					"or use a rootless service of your own (`systemctl --user start podman.socket`, or `podman system service --time=0 &`) " +
					"and point [backends.podman] url at it",
				Err: err}
		}
		if _, serr := os.Stat(sock); serr != nil {
			if _, perr := exec.LookPath("podman"); perr != nil {
				return &backend.Error{Kind: backend.ErrUnavailable, Op: op, Path: s.url,
					Msg: "Podman is not installed here (no podman on PATH, no service socket at " + sock + "). Install it: as root run scripts/setup-podman.sh " +
						"(installs podman, runc and catatonit, starts the service, builds the image), or apt-get install podman runc catatonit; " +
						"or point [backends.podman] url (or CONTAINER_HOST) at a machine that runs it",
					Err: err}
			}
		}
	}
	if advice := sshAdvice(s.url, s.identity, err); advice != "" {
		return &backend.Error{Kind: backend.ErrUnavailable, Op: op, Path: s.url,
			Msg: "the Podman service over ssh does not answer: " + advice, Err: err}
	}
	return &backend.Error{Kind: backend.ErrUnavailable, Op: op, Path: s.url,
		Msg: "the Podman service does not answer. Start it: as root run scripts/setup-podman.sh, " +
			"or `podman system service --time=0 " + s.urlForHint() + " &`; or point [backends.podman] url (or CONTAINER_HOST) at a running one",
		Err: err}
}

func (s *service) urlForHint() string {
	if strings.HasPrefix(s.url, "unix://") {
		return s.url
	}
	return "unix:///run/podman/podman.sock"
}

// wrap turns a bindings error into a backend error: the caller's own
// cancellation passes through, a dead connection is ErrUnavailable (and
// dropped), and an error the service reported is ErrUnavailable with its
// message.
func (s *service) wrap(ctx context.Context, op, what string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || isConnErr(err)) {
		return fmt.Errorf("%s %s: %w", op, what, ctx.Err())
	}
	var em *errorhandling.ErrorModel
	if errors.As(err, &em) {
		return &backend.Error{Kind: backend.ErrUnavailable, Op: op, Path: what,
			Msg: fmt.Sprintf("the Podman service refused (HTTP %d)", em.ResponseCode), Err: err}
	}
	if isConnErr(err) {
		s.drop()
		return s.unreachable(op, err)
	}
	return &backend.Error{Kind: backend.ErrUnavailable, Op: op, Path: what, Msg: "Podman service call failed", Err: err}
}

// isConnErr reports a transport failure: nothing listens, the connection
// broke, or the bindings could not connect.
func isConnErr(err error) bool {
	var ce bindings.ConnectError
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ce) || errors.As(err, &oe) || errors.As(err, &ne) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "EOF")
}

// httpCode returns the status the service answered with, or 0.
func httpCode(err error) int {
	var em *errorhandling.ErrorModel
	if errors.As(err, &em) {
		return em.ResponseCode
	}
	return 0
}

// notFound reports the service's "no such container/exec/image".
func notFound(err error) bool {
	if err == nil || isConnErr(err) {
		return false
	}
	m := err.Error()
	return httpCode(err) == 404 || strings.Contains(m, "no such container") || strings.Contains(m, "no such exec") ||
		strings.Contains(m, "no container with name or ID")
}

// containerGone reports the errors an exec gets when its container is not
// running any more: stopped, exited, killed or removed.
func containerGone(err error) bool {
	if err == nil || isConnErr(err) {
		return false
	}
	m := err.Error()
	return notFound(err) || strings.Contains(m, "state improper") || strings.Contains(m, "not running") ||
		strings.Contains(m, "container has already been removed")
}

// Interface guards
var _ context.Context = callCtx{}
