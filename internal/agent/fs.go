//go:build linux && (amd64 || arm64)

package agent

import (
	"context"
	"io"
	"sync"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/rootfs"
	"github.com/wai-dev/wai/internal/agentfs"
	"github.com/wai-dev/wai/internal/agentproto"
)

// fsCache keeps the confined filesystems of FSRoot, one per set of limits
// the host sent (in practice one per session), so that a request costs no
// open of the root. Past maxCachedFS sets a request gets a filesystem of
// its own, closed after it: one in use is never closed under it.
type fsCache struct {
	mu       sync.Mutex
	byLimits map[backend.Limits]*rootfs.FS
}

const maxCachedFS = 8

// fsFor returns the filesystem of s.FSRoot under l, and what to call
// when the request is done with it.
func (s *Server) fsFor(l backend.Limits) (*rootfs.FS, func(), error) {
	c := &s.fsCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.byLimits[l]; f != nil {
		return f, func() {}, nil
	}
	// The same code as the host's filesystem, so the same confinement:
	// openat2 with RESOLVE_IN_ROOT under the root's descriptor, FIFOs and
	// devices refused, the deadline checked in every loop. Files it
	// creates belong to the agent's user, the sandbox user, as a
	// command's would: no owner to set, the default modes.
	f, err := rootfs.New(s.FSRoot, rootfs.Options{Limits: l})
	if err != nil {
		return nil, nil, err
	}
	if len(c.byLimits) >= maxCachedFS {
		return f, func() { _ = f.Close() }, nil
	}
	if c.byLimits == nil {
		c.byLimits = map[backend.Limits]*rootfs.FS{}
	}
	c.byLimits[l] = f
	return f, func() {}, nil
}

// startFS runs file operation id in the background, under the deadline
// the request carries, until it ends or the host cancels it; an id in use
// is a protocol error.
func (s *Server) startFS(id uint32, req agentproto.FSRequest) error {
	var ctx context.Context
	var cancel context.CancelFunc
	if req.TimeoutMS > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), msDuration(req.TimeoutMS))
	} else {
		ctx, cancel = context.WithCancel(context.Background())
	}
	s.mu.Lock()
	if _, dup := s.cmds[id]; dup || s.fsOps[id] != nil || id == 0 {
		s.mu.Unlock()
		cancel()
		return errIDInUse(id)
	}
	s.fsOps[id] = cancel
	var in *io.PipeReader
	var body io.Reader // nil, not a nil *PipeReader, when there is none
	if req.Op == agentproto.FSCopyIn {
		pr, pw := io.Pipe()
		if s.fsIn == nil {
			s.fsIn = map[uint32]*io.PipeWriter{}
		}
		s.fsIn[id], in, body = pw, pr, pr
		// A read waiting for content the host no longer sends ends with
		// the operation's context (its deadline, a cancel, the
		// connection's end).
		context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		resp := s.serveFS(ctx, req, body)
		s.mu.Lock()
		delete(s.fsOps, id)
		delete(s.fsIn, id)
		s.mu.Unlock()
		if in != nil {
			in.CloseWithError(io.ErrClosedPipe) // a pending fsData returns
		}
		cancel()
		s.sendFS(id, resp)
	}()
	return nil
}

func (s *Server) serveFS(ctx context.Context, req agentproto.FSRequest, in io.Reader) agentproto.FSResponse {
	l, err := agentfs.RequestLimits(req)
	if err != nil {
		return agentproto.FSResponse{Error: agentfs.EncodeError(err)}
	}
	f, done, err := s.fsFor(l)
	if err != nil {
		return agentproto.FSResponse{Error: agentfs.EncodeError(err)}
	}
	defer done()
	if in != nil {
		return agentfs.HandleCopyIn(ctx, f, req, in)
	}
	return agentfs.Handle(ctx, f, req)
}
