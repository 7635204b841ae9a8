package agentfs

import (
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
)

// Per-entry allowance of AnswerCap: a path of up to 4096 bytes, JSON
// escaping and the fields around it.
const entryAllowance = 16 << 10

// AnswerCap is the most bytes the host reads of the answer to req: a
// generous bound on what a correct agent can send under req's limits (the
// text of a read or grep at most MaxReadBytes, JSON escaping up to six
// times that; at most MaxResults entries). Past it the host drops the
// answer: an agent cannot make the host's memory grow without bound.
func AnswerCap(req agentproto.FSRequest) int {
	n := 64<<10 + entryAllowance*max(req.MaxResults, 0) + 8*max(req.MaxReadBytes, 0)
	if req.Op == agentproto.FSReadBytes {
		n += int(min(max(req.Max, 0), MaxReadBytesAnswer))*4/3 + 4
	}
	return n
}

// NewRequest is the wire request of op with l's limits; the caller sets
// the operation's fields.
func NewRequest(op string, l backend.Limits) agentproto.FSRequest {
	return agentproto.FSRequest{Op: op, MaxResults: l.MaxResults, MaxReadBytes: l.MaxReadBytes, MaxWriteChars: l.MaxWriteChars}
}

func failed(resp *agentproto.FSResponse) error {
	if resp.Error != nil {
		return DecodeError(resp.Error)
	}
	return nil
}

// DecodeStat is Stat's answer.
func DecodeStat(resp *agentproto.FSResponse) (backend.FileInfo, error) {
	if err := failed(resp); err != nil {
		return backend.FileInfo{}, err
	}
	if resp.Info == nil {
		return backend.FileInfo{}, errBadAnswer("fs.stat", "no file info")
	}
	return DecodeInfo("fs.stat", *resp.Info)
}

// DecodeList is List's answer, at most l.MaxResults entries.
func DecodeList(resp *agentproto.FSResponse, l backend.Limits) (backend.ListResult, error) {
	const op = "fs.list"
	if err := failed(resp); err != nil {
		return backend.ListResult{}, err
	}
	if len(resp.Entries) > l.MaxResults {
		return backend.ListResult{}, errBadAnswer(op, "%d entries, over the limit of %d", len(resp.Entries), l.MaxResults)
	}
	res := backend.ListResult{Entries: make([]backend.FileInfo, len(resp.Entries)), Truncated: resp.Truncated}
	for i, e := range resp.Entries {
		fi, err := DecodeInfo(op, e)
		if err != nil {
			return backend.ListResult{}, err
		}
		res.Entries[i] = fi
	}
	return res, nil
}

// DecodeRead is Read's answer to req: the offset asked, at most the lines
// asked, at most MaxReadBytes of text (three times that once invalid
// UTF-8 is replaced).
func DecodeRead(resp *agentproto.FSResponse, req backend.ReadRequest, l backend.Limits) (backend.ReadResult, error) {
	const op = "fs.read"
	if err := failed(resp); err != nil {
		return backend.ReadResult{}, err
	}
	limit, err := l.ReadLimit(req)
	if err != nil {
		return backend.ReadResult{}, err
	}
	p, err := checkPath(op, resp.Path)
	if err != nil {
		return backend.ReadResult{}, err
	}
	if resp.Offset != req.Offset || len(resp.Lines) > limit || resp.TotalLines < 0 {
		return backend.ReadResult{}, errBadAnswer(op, "lines %d+%d of %d for a request of %d+%d",
			resp.Offset, len(resp.Lines), resp.TotalLines, req.Offset, limit)
	}
	res := backend.ReadResult{Path: p, Offset: resp.Offset, Lines: make([]string, len(resp.Lines)),
		TotalLines: resp.TotalLines, Truncated: resp.Truncated}
	n := 0
	for i, line := range resp.Lines {
		n += len(line)
		res.Lines[i] = string(line)
	}
	if n > 3*l.MaxReadBytes {
		return backend.ReadResult{}, errBadAnswer(op, "%d bytes of lines, over the limit of %d", n, l.MaxReadBytes)
	}
	return res, nil
}

// DecodeWrite is Write's answer.
func DecodeWrite(resp *agentproto.FSResponse) (backend.WriteResult, error) {
	if err := failed(resp); err != nil {
		return backend.WriteResult{}, err
	}
	p, err := checkPath("fs.write", resp.Path)
	if err != nil || resp.Bytes < 0 {
		return backend.WriteResult{}, errBadAnswer("fs.write", "path %q, %d bytes", elide(string(resp.Path)), resp.Bytes)
	}
	return backend.WriteResult{Path: p, Bytes: resp.Bytes, Created: resp.Created}, nil
}

// DecodeEdit is Edit's answer.
func DecodeEdit(resp *agentproto.FSResponse) (backend.EditResult, error) {
	if err := failed(resp); err != nil {
		return backend.EditResult{}, err
	}
	p, err := checkPath("fs.edit", resp.Path)
	if err != nil || resp.Replacements < 0 {
		return backend.EditResult{}, errBadAnswer("fs.edit", "path %q, %d replacements", elide(string(resp.Path)), resp.Replacements)
	}
	return backend.EditResult{Path: p, Replacements: resp.Replacements}, nil
}

// DecodeGlob is Glob's answer, at most l.MaxResults paths.
func DecodeGlob(resp *agentproto.FSResponse, l backend.Limits) (backend.GlobResult, error) {
	const op = "fs.glob"
	if err := failed(resp); err != nil {
		return backend.GlobResult{}, err
	}
	if len(resp.Paths) > l.MaxResults {
		return backend.GlobResult{}, errBadAnswer(op, "%d paths, over the limit of %d", len(resp.Paths), l.MaxResults)
	}
	res := backend.GlobResult{Paths: make([]string, len(resp.Paths)), Truncated: resp.Truncated}
	for i, t := range resp.Paths {
		p, err := checkPath(op, t)
		if err != nil {
			return backend.GlobResult{}, err
		}
		res.Paths[i] = p
	}
	return res, nil
}

// DecodeGrep is Grep's answer: at most l.MaxResults matches, at most
// MaxReadBytes of text (three times that once invalid UTF-8 is replaced).
func DecodeGrep(resp *agentproto.FSResponse, l backend.Limits) (backend.GrepResult, error) {
	const op = "fs.grep"
	if err := failed(resp); err != nil {
		return backend.GrepResult{}, err
	}
	if len(resp.Matches) > l.MaxResults {
		return backend.GrepResult{}, errBadAnswer(op, "%d matches, over the limit of %d", len(resp.Matches), l.MaxResults)
	}
	res := backend.GrepResult{Matches: make([]backend.GrepMatch, len(resp.Matches)), Truncated: resp.Truncated}
	n := 0
	for i, m := range resp.Matches {
		p, err := checkPath(op, m.Path)
		if err != nil {
			return backend.GrepResult{}, err
		}
		if m.Line < 1 {
			return backend.GrepResult{}, errBadAnswer(op, "match at line %d", m.Line)
		}
		n += len(m.Text)
		res.Matches[i] = backend.GrepMatch{Path: p, Line: m.Line, Text: string(m.Text)}
	}
	if n > 3*l.MaxReadBytes {
		return backend.GrepResult{}, errBadAnswer(op, "%d bytes of matching text, over the limit of %d", n, l.MaxReadBytes)
	}
	return res, nil
}

// DecodeRemove is Remove's answer.
func DecodeRemove(resp *agentproto.FSResponse) (backend.RemoveResult, error) {
	if err := failed(resp); err != nil {
		return backend.RemoveResult{}, err
	}
	if resp.Removed < 0 {
		return backend.RemoveResult{}, errBadAnswer("fs.remove", "%d entries removed", resp.Removed)
	}
	return backend.RemoveResult{Removed: resp.Removed}, nil
}

// DecodeResolve is ResolvePath's answer: a clean root-relative path.
func DecodeResolve(resp *agentproto.FSResponse) (string, error) {
	if err := failed(resp); err != nil {
		return "", err
	}
	return checkPath("fs.resolve", resp.Path)
}

// DecodeReadBytes is ReadBytes's answer: at most max bytes.
func DecodeReadBytes(resp *agentproto.FSResponse, max int64) ([]byte, int64, error) {
	if err := failed(resp); err != nil {
		return nil, 0, err
	}
	if int64(len(resp.Data)) > max || resp.Size < int64(len(resp.Data)) {
		return nil, 0, errBadAnswer("fs.read_bytes", "%d bytes of a file of %d, %d asked", len(resp.Data), resp.Size, max)
	}
	return resp.Data, resp.Size, nil
}

// DecodeCopyIn is CopyIn's answer: the bytes copied, at most sent.
func DecodeCopyIn(resp *agentproto.FSResponse, sent int64) (int64, error) {
	if err := failed(resp); err != nil {
		return 0, err
	}
	if resp.Size < 0 || resp.Size > sent {
		return 0, errBadAnswer("fs.copyin", "%d bytes copied of %d sent", resp.Size, sent)
	}
	return resp.Size, nil
}
