//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentfs"
	"github.com/wai-dev/wai/internal/agentproto"
)

// fsCall is one file operation through the agent: its answer comes as
// FSPart frames and an FSEnd, gathered up to a cap (agentfs.AnswerCap);
// past the cap the rest is read and dropped, so an agent that floods
// cannot make the host's memory grow, nor break the connection of the
// commands that share it.
type fsCall struct {
	id  uint32
	cap int

	mu    sync.Mutex
	buf   []byte
	over  bool
	err   error // the connection ended first
	ended bool
	done  chan struct{} // closed by finish
}

// fsStart sends req under a fresh id and returns the call.
func (a *agentConn) fsStart(req agentproto.FSRequest) (*fsCall, error) {
	payload, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if len(payload)+agentproto.HeaderSize > agentproto.MaxHostFrame {
		return nil, backend.Errorf(backend.ErrInvalid, "fs."+req.Op, string(req.Path),
			"the request is %d bytes, over the agent's frame limit of %d: send less content per call", len(payload), agentproto.MaxHostFrame)
	}
	c := &fsCall{cap: agentfs.AnswerCap(req), done: make(chan struct{})}
	a.mu.Lock()
	// deadErr, set under mu by fail, rather than alive(): between the two
	// a call added here would be in no map that fail ends.
	if a.deadErr != nil {
		err := a.deadErr
		a.mu.Unlock()
		return nil, fmt.Errorf("%w (%v)", errAgentDead, err)
	}
	c.id = a.takeID()
	if a.fsCalls == nil {
		a.fsCalls = map[uint32]*fsCall{}
	}
	a.fsCalls[c.id] = c
	a.mu.Unlock()
	if err := a.send(agentproto.TypeFS, c.id, payload); err != nil {
		return nil, err
	}
	return c, nil
}

// fsCancel asks the agent to stop call c. Its answer still comes (the
// agent answers every request) and is dropped; the call stays known until
// then, so that answer is no protocol error.
func (a *agentConn) fsCancel(c *fsCall) {
	if err := a.out.WriteJSON(agentproto.TypeCancel, c.id, agentproto.Cancel{}); err != nil {
		a.fail(err)
	}
}

// fsFrame takes a piece of a file operation's answer.
func (a *agentConn) fsFrame(f agentproto.Frame) error {
	if len(f.Payload) > agentproto.MaxChunk {
		return fmt.Errorf("%w: %s frame of %d bytes", agentproto.ErrMalformed, f.Type, len(f.Payload))
	}
	a.mu.Lock()
	c := a.fsCalls[f.ID]
	if c != nil && f.Type == agentproto.TypeFSEnd {
		delete(a.fsCalls, f.ID)
	}
	a.mu.Unlock()
	if c == nil {
		return fmt.Errorf("%w: %s frame for id %d, which runs no file operation", agentproto.ErrMalformed, f.Type, f.ID)
	}
	c.add(f.Payload)
	if f.Type == agentproto.TypeFSEnd {
		c.finish(nil)
	}
	return nil
}

func (c *fsCall) add(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over || len(c.buf)+len(p) > c.cap {
		c.over, c.buf = true, nil
		return
	}
	c.buf = append(c.buf, p...)
}

func (c *fsCall) finish(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.ended, c.err = true, err
	close(c.done)
}

// response decodes the answer of an ended call.
func (c *fsCall) response(op, p string) (*agentproto.FSResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.err != nil:
		return nil, backend.Errorf(backend.ErrUnavailable, op, p,
			"the in-container agent stopped answering during the call (%v); the next call starts a new one. "+
				"A write, edit or removal may or may not have happened: look before running it again", c.err)
	case c.over:
		return nil, backend.Errorf(backend.ErrUnavailable, op, p,
			"the in-container agent's answer exceeds %d bytes, more than these limits allow; it is not used", c.cap)
	}
	var resp agentproto.FSResponse
	if err := agentproto.Decode(c.buf, &resp); err != nil {
		return nil, backend.Errorf(backend.ErrUnavailable, op, p, "the in-container agent's answer is not valid: %v", err)
	}
	return &resp, nil
}

// fsSend streams body to call c in FSData frames, then the empty frame
// that ends it; it stops when the call ends (the agent answered, an error
// say) or ctx does. A body that fails to read cancels the call.
func (a *agentConn) fsSend(ctx context.Context, c *fsCall, body io.Reader) (int64, error) {
	buf := make([]byte, agentproto.MaxFSData)
	var sent int64
	for {
		select {
		case <-c.done:
			return sent, nil
		case <-ctx.Done():
			return sent, nil // the caller cancels the call
		default:
		}
		n, err := body.Read(buf)
		if n > 0 {
			if werr := a.out.Write(agentproto.TypeFSData, c.id, buf[:n]); werr != nil {
				a.fail(werr)
				return sent, nil // the call fails with the connection
			}
			sent += int64(n)
		}
		switch {
		case err == io.EOF:
			if werr := a.out.Write(agentproto.TypeFSData, c.id, nil); werr != nil {
				a.fail(werr)
			}
			return sent, nil
		case err != nil:
			a.fsCancel(c)
			return sent, err
		}
	}
}
