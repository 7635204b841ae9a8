//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/rootfs"
	"github.com/wai-dev/wai/internal/agentfs"
	"github.com/wai-dev/wai/internal/agentproto"
)

// agentFS is the workspace's Filesystem served inside its container by
// wai-agent (docs/AGENT.md, "File operations"), for a workspace that is
// no directory of this host (a Podman volume, a remote service): the
// agent runs host/backend/rootfs over /workspace, so the confinement, the
// refusal of FIFOs and devices and the limits are the host side's. The
// host sends its limits and the caller's deadline with every request,
// keeps its own deadline (a stuck agent never holds a call past the
// caller's context) and checks every answer against the limits before
// using it. Calls share the container's resident agent connection with
// its commands and may run concurrently.
type agentFS struct {
	w *Workspace
}

// agentFS returns the workspace's filesystem served through its agent.
func (w *Workspace) agentFS() *agentFS { return &agentFS{w: w} }

// Interface guards
var (
	_ backend.Filesystem   = (*agentFS)(nil)
	_ backend.PathResolver = (*agentFS)(nil)
	_ backend.BlobReader   = (*agentFS)(nil)
	_ backend.CopyInFS     = (*agentFS)(nil)
)

// conn returns the container's agent, starting the container and the
// agent when needed, with the release of the workspace's hold.
func (f *agentFS) conn(ctx context.Context, op, p string) (*ctrState, *agentConn, func(), error) {
	w := f.w
	release, err := w.enter(op)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := w.ensure(ctx)
	if err != nil {
		release()
		return nil, nil, nil, err
	}
	conn := w.agentFor(ctx, st)
	if conn == nil {
		release()
		return nil, nil, nil, backend.Errorf(backend.ErrUnavailable, op, p,
			"this workspace's files are served by wai-agent in the container, which is not running "+
				"(agent = false in [backends.podman], or it failed to start: see the runtime.podman.agent_failed event); "+
				"turn the agent on, or keep the workspace in a host directory")
	}
	if conn.version < agentproto.FSVersion {
		release()
		return nil, nil, nil, backend.Errorf(backend.ErrUnavailable, op, p,
			"the container %s runs wai-agent protocol version %d, from an older wai, which serves no files (version %d does): "+
				"stop the session's container so that the next call creates it with this wai's agent", w.name, conn.version, agentproto.FSVersion)
	}
	return st, conn, release, nil
}

// do runs req through the agent and returns its answer, or the error of
// a call that got none: the context ended, the workspace closed, the
// agent died or answered past the limits.
func (f *agentFS) do(ctx context.Context, req agentproto.FSRequest) (*agentproto.FSResponse, error) {
	resp, _, err := f.exchange(ctx, req, nil)
	return resp, err
}

// exchange is do with content: body, when set, is streamed to the agent
// after the request (copy_in); sent is how many bytes of it went.
func (f *agentFS) exchange(ctx context.Context, req agentproto.FSRequest, body io.Reader) (_ *agentproto.FSResponse, sent int64, _ error) {
	op, p := "fs."+req.Op, string(req.Path)
	if err := ctx.Err(); err != nil {
		return nil, 0, rootfs.Stopped(op, p, err)
	}
	st, conn, release, err := f.conn(ctx, op, p)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	if _, ok := ctx.Deadline(); !ok {
		// No operation runs unbounded: without a deadline of the
		// caller's, the longest a command may run.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.w.b.limits.MaxTimeout)
		defer cancel()
	}
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl).Milliseconds()
		if left < 1 {
			return nil, 0, rootfs.Stopped(op, p, context.DeadlineExceeded)
		}
		req.TimeoutMS = left
	}
	call, err := conn.fsStart(req)
	if errors.Is(err, errAgentDead) {
		return nil, 0, backend.Errorf(backend.ErrUnavailable, op, p,
			"the in-container agent's connection ended before the call was sent (%v): run it again, a new agent is started", err)
	}
	if err != nil {
		return nil, 0, err
	}
	var sendErr chan error
	if body != nil {
		sendErr = make(chan error, 1)
		go func() {
			var err error
			sent, err = conn.fsSend(ctx, call, body)
			sendErr <- err
		}()
	}
	var resp *agentproto.FSResponse
	select {
	case <-call.done:
		resp, err = call.response(op, p)
	case <-ctx.Done():
		f.abandon(st, conn, call)
		err = rootfs.Stopped(op, p, ctx.Err())
	case <-f.w.closing:
		f.abandon(st, conn, call)
		err = backend.Errorf(backend.ErrUnavailable, op, p, "the workspace of session %s closed during the call", f.w.session)
	}
	if sendErr != nil {
		// The sender stops at the call's end or the context's (each
		// frame's write is bounded): sent is final after it.
		if serr := <-sendErr; serr != nil && err == nil {
			err = backend.Errorf(backend.ErrUnavailable, op, p, "reading the content to copy in failed: %v", serr)
		}
	}
	return resp, sent, err
}

// abandon cancels call, which the caller no longer waits for. An agent
// that does not answer the cancel within agentCancelWait is wedged (the
// operations run on a local file system and check their context every
// 64 KiB): it is dropped and killed, as for a command, so the next call
// gets a new one instead of waiting on it too.
func (f *agentFS) abandon(st *ctrState, conn *agentConn, call *fsCall) {
	conn.fsCancel(call)
	go func() {
		t := time.NewTimer(f.w.b.slackOr(agentCancelWait))
		defer t.Stop()
		select {
		case <-call.done:
		case <-t.C:
			f.w.dropAgent(st, conn, "it did not answer a cancelled file operation")
		}
	}()
}

func (f *agentFS) request(op, p string) agentproto.FSRequest {
	req := agentfs.NewRequest(op, f.w.b.limits)
	req.Path = agentproto.Text(p)
	return req
}

// ask sends one request and decodes its answer: the common course of
// the file calls.
func ask[T any](ctx context.Context, f *agentFS, r agentproto.FSRequest, decode func(*agentproto.FSResponse) (T, error)) (T, error) {
	resp, err := f.do(ctx, r)
	if err != nil {
		var zero T
		return zero, err
	}
	return decode(resp)
}

// askLimited is ask for the answers that the backend's limits cap.
func askLimited[T any](ctx context.Context, f *agentFS, r agentproto.FSRequest, decode func(*agentproto.FSResponse, backend.Limits) (T, error)) (T, error) {
	return ask(ctx, f, r, func(resp *agentproto.FSResponse) (T, error) { return decode(resp, f.w.b.limits) })
}

// Stat implements backend.Filesystem.
func (f *agentFS) Stat(ctx context.Context, p string) (backend.FileInfo, error) {
	return ask(ctx, f, f.request(agentproto.FSStat, p), agentfs.DecodeStat)
}

// List implements backend.Filesystem.
func (f *agentFS) List(ctx context.Context, p string) (backend.ListResult, error) {
	return askLimited(ctx, f, f.request(agentproto.FSList, p), agentfs.DecodeList)
}

// Read implements backend.Filesystem.
func (f *agentFS) Read(ctx context.Context, req backend.ReadRequest) (backend.ReadResult, error) {
	r := f.request(agentproto.FSRead, req.Path)
	r.Offset, r.Limit = req.Offset, req.Limit
	resp, err := f.do(ctx, r)
	if err != nil {
		return backend.ReadResult{}, err
	}
	return agentfs.DecodeRead(resp, req, f.w.b.limits)
}

// Write implements backend.Filesystem.
func (f *agentFS) Write(ctx context.Context, req backend.WriteRequest) (backend.WriteResult, error) {
	// Checked here too: content past the limit never crosses the wire.
	if err := f.w.b.limits.CheckWrite("fs.write", req.Path, req.Content); err != nil {
		return backend.WriteResult{}, err
	}
	r := f.request(agentproto.FSWrite, req.Path)
	r.Content, r.Mode, r.Resolved = agentproto.Text(req.Content), string(req.Mode), agentproto.Text(req.Resolved)
	return ask(ctx, f, r, agentfs.DecodeWrite)
}

// Edit implements backend.Filesystem.
func (f *agentFS) Edit(ctx context.Context, req backend.EditRequest) (backend.EditResult, error) {
	if err := f.w.b.limits.CheckWrite("fs.edit", req.Path, req.New); err != nil {
		return backend.EditResult{}, err
	}
	r := f.request(agentproto.FSEdit, req.Path)
	r.Old, r.New, r.ReplaceAll, r.Resolved = agentproto.Text(req.Old), agentproto.Text(req.New), req.ReplaceAll, agentproto.Text(req.Resolved)
	return ask(ctx, f, r, agentfs.DecodeEdit)
}

// Glob implements backend.Filesystem.
func (f *agentFS) Glob(ctx context.Context, req backend.GlobRequest) (backend.GlobResult, error) {
	r := f.request(agentproto.FSGlob, req.Path)
	r.Pattern = agentproto.Text(req.Pattern)
	return askLimited(ctx, f, r, agentfs.DecodeGlob)
}

// Grep implements backend.Filesystem.
func (f *agentFS) Grep(ctx context.Context, req backend.GrepRequest) (backend.GrepResult, error) {
	r := f.request(agentproto.FSGrep, req.Path)
	r.Pattern, r.Glob = agentproto.Text(req.Pattern), agentproto.Text(req.Glob)
	return askLimited(ctx, f, r, agentfs.DecodeGrep)
}

// Remove implements backend.Filesystem.
func (f *agentFS) Remove(ctx context.Context, req backend.RemoveRequest) (backend.RemoveResult, error) {
	r := f.request(agentproto.FSRemove, req.Path)
	r.Recursive, r.Resolved = req.Recursive, agentproto.Text(req.Resolved)
	return ask(ctx, f, r, agentfs.DecodeRemove)
}

// ResolvePath implements backend.PathResolver, resolving in the
// container as the write that follows will.
func (f *agentFS) ResolvePath(ctx context.Context, p string, followLast bool) (string, error) {
	r := f.request(agentproto.FSResolve, p)
	r.FollowLast = followLast
	return ask(ctx, f, r, agentfs.DecodeResolve)
}

// ReadBytes implements backend.BlobReader: at most max bytes (no more
// than agentfs.MaxReadBytesAnswer in one call).
func (f *agentFS) ReadBytes(ctx context.Context, p string, max int64) ([]byte, int64, error) {
	if max < 0 || max > agentfs.MaxReadBytesAnswer {
		return nil, 0, backend.Errorf(backend.ErrInvalid, "fs.read_bytes", p, "byte limit %d is outside 0–%d", max, agentfs.MaxReadBytesAnswer)
	}
	r := f.request(agentproto.FSReadBytes, p)
	r.Max = max
	resp, err := f.do(ctx, r)
	if err != nil {
		return nil, 0, err
	}
	return agentfs.DecodeReadBytes(resp, max)
}

// CopyIn implements backend.CopyInFS: the new file is made in the
// container by rootfs's CopyIn, and r streamed to it in FSData frames.
func (f *agentFS) CopyIn(ctx context.Context, p string, r io.Reader, perm fs.FileMode) (int64, error) {
	if perm&^fs.ModePerm != 0 {
		return 0, backend.Errorf(backend.ErrInvalid, "fs.copyin", p, "perm may only hold permission bits, got %v", perm)
	}
	req := f.request(agentproto.FSCopyIn, p)
	req.Perm = uint32(perm)
	resp, sent, err := f.exchange(ctx, req, r)
	if err != nil {
		return 0, err
	}
	return agentfs.DecodeCopyIn(resp, sent)
}
