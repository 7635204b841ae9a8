//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The exec session is started and attached here, not with the bindings'
// ExecStartAndAttach, which ignores its context (a timed-out command keeps
// the call blocked), swaps the shared connection's transport under
// concurrent callers, and leaks a socket per exec. Here every exec gets its
// own connection to the service, dialled through the bindings connection (so
// unix and ssh URLs both work), owned by this code alone: closing it is how a
// stuck attach is abandoned.
//
// The wire protocol is Docker's: POST /exec/{id}/start with an Upgrade
// header, then a stream of frames, each an 8-byte header (stream id, three
// zero bytes, big-endian payload length) and the payload: 1 stdout, 2
// stderr, 3 an error message from the service. Stdin is written to the same
// socket and ended with a half-close. The stream ends when the exec's main
// process exits.

// attachment is a started exec session.
type attachment struct {
	conn net.Conn
	r    *bufio.Reader

	once   sync.Once
	stdinW sync.WaitGroup
}

// handshakeTimeout bounds sending the start request and reading its answer.
const handshakeTimeout = 30 * time.Second

// startAttached starts exec session id and returns its output stream.
// stdin, when non-nil, is written to the process and then closed; with a
// nil stdin the exec must have been created without AttachStdin.
func (s *service) startAttached(ctx context.Context, id string, stdin io.Reader) (*attachment, error) {
	cctx, err := s.ctx(ctx)
	if err != nil {
		return nil, err
	}
	c, err := client(cctx)
	if err != nil {
		return nil, err
	}
	conn, err := c.GetDialer(cctx)
	if err != nil {
		return nil, s.wrap(ctx, "exec", "start", err)
	}
	// Abandon the handshake when the caller gives up; after it, the
	// caller owns the connection and closes it.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	a, err := s.handshake(ctx, conn, id)
	if !stop() {
		if a != nil {
			conn.Close()
		}
		return nil, fmt.Errorf("exec start: %w", ctx.Err())
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	if stdin != nil {
		a.stdinW.Add(1)
		go func() {
			defer a.stdinW.Done()
			// A command that exits without reading its input closes the
			// socket under this copy; that error is expected.
			if _, err := io.Copy(conn, stdin); err == nil {
				if cw, ok := conn.(interface{ CloseWrite() error }); ok {
					_ = cw.CloseWrite()
				}
			}
		}()
	}
	return a, nil
}

func (s *service) handshake(ctx context.Context, conn net.Conn, id string) (*attachment, error) {
	_ = conn.SetDeadline(time.Now().Add(handshakeTimeout))
	body := `{"Detach":false,"Tty":false}`
	ver := s.apiVersion()
	if ver == "" || ver == "0.0.0" {
		ver = "4.0.0"
	}
	req := "POST /v" + ver + "/libpod/exec/" + id + "/start HTTP/1.1\r\n" +
		"Host: d\r\nUser-Agent: wai\r\nContent-Type: application/json\r\n" +
		"Connection: Upgrade\r\nUpgrade: tcp\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if _, err := io.WriteString(conn, req); err != nil {
		return nil, s.wrap(ctx, "exec", "start", err)
	}
	r := bufio.NewReaderSize(conn, 32<<10)
	tp := textproto.NewReader(r)
	status, err := tp.ReadLine()
	if err != nil {
		return nil, s.wrap(ctx, "exec", "start", err)
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, s.wrap(ctx, "exec", "start", err)
	}
	code := 0
	if f := strings.Fields(status); len(f) >= 2 {
		code, _ = strconv.Atoi(f[1])
	}
	if code == 101 || code == 200 {
		_ = conn.SetDeadline(time.Time{})
		return &attachment{conn: conn, r: r}, nil
	}
	// An error answer carries a JSON message.
	n, _ := strconv.Atoi(hdr.Get("Content-Length"))
	b, _ := io.ReadAll(io.LimitReader(r, int64(min(max(n, 0), 64<<10))))
	var em struct {
		Message string `json:"message"`
		Cause   string `json:"cause"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &em) == nil && em.Message != "" {
		msg = em.Message
	}
	return nil, &startError{code: code, msg: msg}
}

// startError is the service refusing to start an exec.
type startError struct {
	code int
	msg  string
}

func (e *startError) Error() string {
	return fmt.Sprintf("exec start: the Podman service answered HTTP %d: %s", e.code, e.msg)
}

// copyOut demultiplexes the stream into stdout and stderr until the exec
// ends (nil) or the connection breaks.
func (a *attachment) copyOut(stdout, stderr io.Writer) error {
	var hdr [8]byte
	buf := make([]byte, 32<<10)
	for {
		if _, err := io.ReadFull(a.r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		n := int64(binary.BigEndian.Uint32(hdr[4:]))
		var w io.Writer
		switch hdr[0] {
		case 0: // stdin echoed back: not ours to show
			w = io.Discard
		case 1:
			w = stdout
		case 2:
			w = stderr
		case 3:
			msg, _ := io.ReadAll(io.LimitReader(a.r, min(n, 4096)))
			return fmt.Errorf("the Podman service reported: %s", strings.TrimSpace(string(msg)))
		default:
			return fmt.Errorf("exec stream out of sync (stream id %d)", hdr[0])
		}
		if got, err := io.CopyBuffer(w, io.LimitReader(a.r, n), buf); err != nil || got < n {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// close ends the attachment and waits for the stdin copy.
func (a *attachment) close() {
	a.once.Do(func() { a.conn.Close() })
	a.stdinW.Wait()
}

// Interface guards
var _ error = (*startError)(nil)
