//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
)

// agentConn is a running wai-agent: one long-lived exec session whose
// stdin and stdout carry the protocol of docs/AGENT.md. Nothing listens
// anywhere: the host holds the only connection, through the service.
//
// The agent runs as the sandbox user, so what it says is the sandbox's
// word about its own commands. The host reads at most MaxAgentFrame bytes
// per frame and a bounded number of frames per second, caps output itself
// (the call's OutputBuffer), keeps its own deadline for every command, and
// takes any frame that breaks the protocol as the agent's death: every
// call on it fails and the caller kills the command from outside.
type agentConn struct {
	att    *attachment
	execID string
	pid    int // the agent's pid in the container, from its hello
	out    *agentproto.Writer
	stderr *backend.OutputBuffer // what the agent logged, for diagnostics

	// version is the protocol version of its hello: below
	// agentproto.FSVersion (an agent bind-mounted by an older wai) it
	// serves commands only.
	version int

	mu     sync.Mutex
	calls  map[uint32]*agentCall
	nextID uint32
	// fsCalls are the file operations running (agent_fs_conn.go).
	fsCalls map[uint32]*fsCall

	dead    chan struct{} // closed when the connection is over
	deadErr error         // why; set before dead is closed
	once    sync.Once
}

// errAgentDead is the agent's connection ending under a call.
var errAgentDead = errors.New("the in-container agent stopped answering")

// Frame rate bound: past this many frames in a second the reader pauses
// until the second is over. Output frames carry up to MaxChunk bytes, so
// the bound only bites an agent that sends floods of tiny frames.
const maxFramesPerSecond = 100_000

// agentHelloTimeout bounds starting the agent and its hello.
const agentHelloTimeout = 20 * time.Second

// agentWriteTimeout bounds one frame's write: an agent that stops reading
// its input is wedged, and a write that cannot finish kills the connection.
const agentWriteTimeout = 10 * time.Second

// deadlineWriter writes with agentWriteTimeout.
type deadlineWriter struct{ c net.Conn }

func (d deadlineWriter) Write(p []byte) (int, error) {
	_ = d.c.SetWriteDeadline(time.Now().Add(agentWriteTimeout))
	return d.c.Write(p)
}

// startAgent starts wai-agent in container ctrID and shakes hands.
func (b *Backend) startAgent(ctx context.Context, ctrID string) (*agentConn, error) {
	ctx, cancel := context.WithTimeout(ctx, agentHelloTimeout)
	defer cancel()
	execID, err := b.execCreate(ctx, ctrID, []string{agentMountPath}, nil, "/", true)
	if err != nil {
		return nil, b.svc.wrap(ctx, "agent", "start", err)
	}
	att, err := b.svc.startAttached(ctx, execID, nil)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	a := &agentConn{att: att, execID: execID, out: agentproto.NewWriter(deadlineWriter{att.conn}),
		stderr: backend.NewOutputBuffer(4 << 10), calls: map[uint32]*agentCall{}, dead: make(chan struct{})}
	go func() {
		err := att.copyOut(pw, a.stderr)
		if err == nil {
			err = io.EOF
		}
		pw.CloseWithError(err)
	}()
	fr := agentproto.NewReader(pr, agentproto.MaxAgentFrame)
	hello := make(chan error, 1)
	go func() { hello <- a.hello(fr) }()
	select {
	case err = <-hello:
	case <-ctx.Done():
		err = fmt.Errorf("no hello: %w", ctx.Err())
	}
	if err != nil {
		a.fail(err)
		return nil, backend.Errorf(backend.ErrUnavailable, "agent", "start", "wai-agent did not start: %v%s", err, a.logTail())
	}
	go a.read(fr)
	return a, nil
}

func (a *agentConn) logTail() string {
	if s := a.stderr.String(); s != "" {
		return " (it said: " + s + ")"
	}
	return ""
}

func (a *agentConn) hello(fr *agentproto.Reader) error {
	var versions []int // newest first; the agent picks the newest it speaks
	for v := agentproto.Version; v >= agentproto.MinVersion; v-- {
		versions = append(versions, v)
	}
	if err := a.out.WriteJSON(agentproto.TypeHello, 0, agentproto.Hello{Versions: versions}); err != nil {
		return err
	}
	f, err := fr.Read()
	if err != nil {
		return err
	}
	if f.Type == agentproto.TypeError && len(f.Payload) <= agentproto.MaxControlFrame {
		var e agentproto.Error
		_ = agentproto.Decode(f.Payload, &e)
		return fmt.Errorf("it refused the hello: %s", e.Message)
	}
	var h agentproto.Hello
	if f.Type != agentproto.TypeHello || f.ID != 0 || len(f.Payload) > agentproto.MaxControlFrame {
		return fmt.Errorf("%w: first frame %s", agentproto.ErrMalformed, f.Type)
	}
	if err := agentproto.Decode(f.Payload, &h); err != nil {
		return err
	}
	if h.Version < agentproto.MinVersion || h.Version > agentproto.Version || h.PID <= 1 {
		return fmt.Errorf("%w: hello with version %d, pid %d", agentproto.ErrMalformed, h.Version, h.PID)
	}
	a.pid, a.version = h.PID, h.Version
	return nil
}

// read dispatches the agent's frames to their calls until the connection
// ends or breaks the protocol.
func (a *agentConn) read(fr *agentproto.Reader) {
	window, frames := time.Now(), 0
	for {
		f, err := fr.Read()
		if err != nil {
			a.fail(err)
			return
		}
		if frames++; frames > maxFramesPerSecond {
			if d := time.Second - time.Since(window); d > 0 {
				time.Sleep(d)
			}
			window, frames = time.Now(), 0
		}
		if err := a.dispatch(f); err != nil {
			a.fail(err)
			return
		}
	}
}

func (a *agentConn) dispatch(f agentproto.Frame) error {
	if f.Type == agentproto.TypeFSPart || f.Type == agentproto.TypeFSEnd {
		return a.fsFrame(f)
	}
	a.mu.Lock()
	c := a.calls[f.ID]
	a.mu.Unlock()
	if c == nil {
		return fmt.Errorf("%w: %s frame for id %d, which runs nothing", agentproto.ErrMalformed, f.Type, f.ID)
	}
	switch f.Type {
	case agentproto.TypeStdout, agentproto.TypeStderr:
		if len(f.Payload) > agentproto.MaxChunk {
			return fmt.Errorf("%w: output chunk of %d bytes", agentproto.ErrMalformed, len(f.Payload))
		}
		return c.output(f.Type, f.Payload)
	case agentproto.TypeStarted, agentproto.TypeExit, agentproto.TypeError:
		if len(f.Payload) > agentproto.MaxControlFrame {
			return fmt.Errorf("%w: %s frame of %d bytes", agentproto.ErrMalformed, f.Type, len(f.Payload))
		}
	default:
		return fmt.Errorf("%w: the agent sent %s", agentproto.ErrMalformed, f.Type)
	}
	switch f.Type {
	case agentproto.TypeStarted:
		var s agentproto.Started
		if err := agentproto.Decode(f.Payload, &s); err != nil {
			return err
		}
		return c.setStarted(s)
	case agentproto.TypeExit:
		var e agentproto.Exit
		if err := agentproto.Decode(f.Payload, &e); err != nil {
			return err
		}
		a.forget(f.ID)
		c.finish(e, nil)
	default:
		var e agentproto.Error
		if err := agentproto.Decode(f.Payload, &e); err != nil {
			return err
		}
		a.forget(f.ID)
		c.finish(agentproto.Exit{}, backend.Errorf(backend.ErrUnavailable, "exec", "", "wai-agent could not run the command: %s", e.Message))
	}
	return nil
}

func (a *agentConn) forget(id uint32) {
	a.mu.Lock()
	delete(a.calls, id)
	a.mu.Unlock()
}

// fail ends the connection: every call on it fails with errAgentDead.
func (a *agentConn) fail(err error) {
	a.once.Do(func() {
		a.mu.Lock()
		a.deadErr = err
		calls, fsCalls := a.calls, a.fsCalls
		a.calls, a.fsCalls = map[uint32]*agentCall{}, nil
		a.mu.Unlock()
		close(a.dead)
		a.att.close()
		for _, c := range calls {
			c.finish(agentproto.Exit{}, fmt.Errorf("%w (%v)", errAgentDead, err))
		}
		for _, c := range fsCalls {
			c.finish(fmt.Errorf("%w (%v)", errAgentDead, err))
		}
	})
}

// alive reports whether the connection still works.
func (a *agentConn) alive() bool {
	select {
	case <-a.dead:
		return false
	default:
		return true
	}
}

// errExecTooLarge is an Exec whose stdin or script does not fit in one
// frame the agent accepts (limits above 12 MiB): the command takes the
// Podman exec path instead.
var errExecTooLarge = errors.New("the command's input exceeds the agent's frame limit")

// exec sends e under a fresh id and returns the call.
func (a *agentConn) exec(e agentproto.Exec, sink *outputSink) (*agentCall, error) {
	payload, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	if len(payload)+agentproto.HeaderSize > agentproto.MaxHostFrame {
		return nil, errExecTooLarge
	}
	c := &agentCall{sink: sink, done: make(chan struct{})}
	a.mu.Lock()
	if !a.alive() {
		a.mu.Unlock()
		return nil, fmt.Errorf("%w (%v)", errAgentDead, a.deadErr)
	}
	c.id = a.takeID()
	a.calls[c.id] = c
	a.mu.Unlock()
	if err := a.send(agentproto.TypeExec, c.id, payload); err != nil {
		return nil, err
	}
	return c, nil
}

// takeID returns a fresh call id, never 0; a.mu must be held. Exec and
// file calls draw from one counter, so an id names one call of either.
func (a *agentConn) takeID() uint32 {
	a.nextID++
	if a.nextID == 0 {
		a.nextID = 1
	}
	return a.nextID
}

// send writes a call's request; a write that fails leaves the stream in
// an unknown state, so it ends the connection and every call on it.
func (a *agentConn) send(t agentproto.Type, id uint32, payload []byte) error {
	if err := a.out.Write(t, id, payload); err != nil {
		a.fail(err)
		return fmt.Errorf("%w (%v)", errAgentDead, err)
	}
	return nil
}

// cancel asks the agent to stop call c's tree.
func (a *agentConn) cancel(c *agentCall, grace time.Duration) {
	if err := a.out.WriteJSON(agentproto.TypeCancel, c.id, agentproto.Cancel{GraceMS: grace.Milliseconds()}); err != nil {
		a.fail(err)
	}
}
