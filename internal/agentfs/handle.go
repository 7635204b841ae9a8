package agentfs

import (
	"context"
	"fmt"
	"io"
	"io/fs"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
)

// MaxReadBytesAnswer bounds read_bytes in the agent: what one answer may
// hold, whatever the host asks (the answer is held in memory, within the
// container's limit, and crosses the wire in MaxChunk pieces).
const MaxReadBytesAnswer = 64 << 20

// RequestLimits returns the limits req carries, checked: the agent runs
// every operation under the host's limits, never defaults of its own, so
// a request without them is refused.
func RequestLimits(req agentproto.FSRequest) (backend.Limits, error) {
	l := backend.DefaultLimits()
	l.MaxResults, l.MaxReadBytes, l.MaxWriteChars = req.MaxResults, req.MaxReadBytes, req.MaxWriteChars
	if err := l.Validate(); err != nil {
		return backend.Limits{}, backend.Errorf(backend.ErrInvalid, "fs."+req.Op, string(req.Path),
			"the request carries no valid limits (%v): the host sends them with every request", err)
	}
	return l, nil
}

// Handle runs req on fsys and returns the answer; a failure is in
// FSResponse.Error. fsys runs under the limits the request carries
// (RequestLimits) and ctx carries its deadline.
func Handle(ctx context.Context, fsys backend.Filesystem, req agentproto.FSRequest) agentproto.FSResponse {
	resp, err := handle(ctx, fsys, req)
	if err != nil {
		return agentproto.FSResponse{Error: EncodeError(err)}
	}
	return resp
}

func handle(ctx context.Context, fsys backend.Filesystem, req agentproto.FSRequest) (agentproto.FSResponse, error) {
	var resp agentproto.FSResponse
	p := string(req.Path)
	switch req.Op {
	case agentproto.FSStat:
		fi, err := fsys.Stat(ctx, p)
		if err != nil {
			return resp, err
		}
		w := EncodeInfo(fi)
		resp.Info = &w
	case agentproto.FSList:
		res, err := fsys.List(ctx, p)
		if err != nil {
			return resp, err
		}
		resp.Entries = make([]agentproto.FSInfo, len(res.Entries))
		for i, fi := range res.Entries {
			resp.Entries[i] = EncodeInfo(fi)
		}
		resp.Truncated = res.Truncated
	case agentproto.FSRead:
		res, err := fsys.Read(ctx, backend.ReadRequest{Path: p, Offset: req.Offset, Limit: req.Limit})
		if err != nil {
			return resp, err
		}
		resp.Path, resp.Offset, resp.TotalLines, resp.Truncated = agentproto.Text(res.Path), res.Offset, res.TotalLines, res.Truncated
		resp.Lines = texts(res.Lines)
	case agentproto.FSWrite:
		res, err := fsys.Write(ctx, backend.WriteRequest{Path: p, Content: string(req.Content),
			Mode: backend.WriteMode(req.Mode), Resolved: string(req.Resolved)})
		if err != nil {
			return resp, err
		}
		resp.Path, resp.Bytes, resp.Created = agentproto.Text(res.Path), res.Bytes, res.Created
	case agentproto.FSEdit:
		res, err := fsys.Edit(ctx, backend.EditRequest{Path: p, Old: string(req.Old), New: string(req.New),
			ReplaceAll: req.ReplaceAll, Resolved: string(req.Resolved)})
		if err != nil {
			return resp, err
		}
		resp.Path, resp.Replacements = agentproto.Text(res.Path), res.Replacements
	default:
		return handleMore(ctx, fsys, req)
	}
	return resp, nil
}

// handleMore serves the search, removal and optional operations.
func handleMore(ctx context.Context, fsys backend.Filesystem, req agentproto.FSRequest) (agentproto.FSResponse, error) {
	var resp agentproto.FSResponse
	p := string(req.Path)
	op := "fs." + req.Op
	switch req.Op {
	case agentproto.FSGlob:
		res, err := fsys.Glob(ctx, backend.GlobRequest{Pattern: string(req.Pattern), Path: p})
		if err != nil {
			return resp, err
		}
		resp.Paths, resp.Truncated = texts(res.Paths), res.Truncated
	case agentproto.FSGrep:
		res, err := fsys.Grep(ctx, backend.GrepRequest{Pattern: string(req.Pattern), Path: p, Glob: string(req.Glob)})
		if err != nil {
			return resp, err
		}
		resp.Matches = make([]agentproto.FSMatch, len(res.Matches))
		for i, m := range res.Matches {
			resp.Matches[i] = agentproto.FSMatch{Path: agentproto.Text(m.Path), Line: m.Line, Text: agentproto.Text(m.Text)}
		}
		resp.Truncated = res.Truncated
	case agentproto.FSRemove:
		res, err := fsys.Remove(ctx, backend.RemoveRequest{Path: p, Recursive: req.Recursive, Resolved: string(req.Resolved)})
		if err != nil {
			return resp, err
		}
		resp.Removed = res.Removed
	case agentproto.FSResolve:
		r, ok := fsys.(backend.PathResolver)
		if !ok {
			return resp, backend.Errorf(backend.ErrUnavailable, op, p, "this agent's filesystem cannot resolve paths")
		}
		res, err := r.ResolvePath(ctx, p, req.FollowLast)
		if err != nil {
			return resp, err
		}
		resp.Path = agentproto.Text(res)
	case agentproto.FSReadBytes:
		r, ok := fsys.(backend.BlobReader)
		if !ok {
			return resp, backend.Errorf(backend.ErrUnavailable, op, p, "this agent's filesystem cannot read bytes")
		}
		if req.Max < 0 || req.Max > MaxReadBytesAnswer {
			return resp, backend.Errorf(backend.ErrInvalid, op, p, "byte limit %d is outside 0–%d", req.Max, MaxReadBytesAnswer)
		}
		data, size, err := r.ReadBytes(ctx, p, req.Max)
		if err != nil {
			return resp, err
		}
		resp.Data, resp.Size = data, size
	default:
		return resp, backend.Errorf(backend.ErrInvalid, op, p,
			"wai-agent does not know the file operation %q: the host is newer than the agent in this container (stop the container to get the current one)",
			fmt.Sprint(req.Op))
	}
	return resp, nil
}

func texts(ss []string) []agentproto.Text {
	out := make([]agentproto.Text, len(ss))
	for i, s := range ss {
		out[i] = agentproto.Text(s)
	}
	return out
}

// HandleCopyIn runs a copy_in on fsys with the content read from r.
func HandleCopyIn(ctx context.Context, fsys backend.Filesystem, req agentproto.FSRequest, r io.Reader) agentproto.FSResponse {
	const op = "fs.copyin"
	p := string(req.Path)
	c, ok := fsys.(backend.CopyInFS)
	if !ok {
		return agentproto.FSResponse{Error: EncodeError(backend.Errorf(backend.ErrUnavailable, op, p, "this agent's filesystem cannot copy files in"))}
	}
	if req.Perm&^uint32(fs.ModePerm) != 0 {
		return agentproto.FSResponse{Error: EncodeError(backend.Errorf(backend.ErrInvalid, op, p, "perm may only hold permission bits, got %#o", req.Perm))}
	}
	n, err := c.CopyIn(ctx, p, r, fs.FileMode(req.Perm))
	if err != nil {
		return agentproto.FSResponse{Error: EncodeError(err)}
	}
	return agentproto.FSResponse{Size: n}
}
