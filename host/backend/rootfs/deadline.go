//go:build linux && (amd64 || arm64)

package rootfs

import (
	"context"
	"errors"
	"io"

	"github.com/wai-dev/wai/host/backend"
)

// ioChunk is how many bytes are read or written between two looks at the
// context. Loops are bounded by bytes, not by lines or entries: a sparse
// file of 8 TiB, a file of NULs or a line that never ends costs the host
// CPU for every byte (the reads run in wai, outside the sandbox's cgroup),
// so the deadline must stop them wherever they are.
const ioChunk = 64 << 10

// ctxReader reads at most ioChunk bytes per call and fails with the
// context's error once it is done, so whatever reads through it (line
// splitting, io.ReadAll) stops at the deadline.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) > ioChunk {
		p = p[:ioChunk]
	}
	return c.r.Read(p)
}

// writeAll writes s in chunks of ioChunk, checking ctx before each.
func writeAll(ctx context.Context, w io.Writer, s string) error {
	for len(s) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := io.WriteString(w, s[:min(len(s), ioChunk)])
		if err != nil {
			return err
		}
		s = s[n:]
	}
	return nil
}

// Stopped is the error of an operation its context ended: it wraps the
// context's error (errors.Is(err, context.DeadlineExceeded) holds) and is
// ErrUnavailable, the kind the kernel gives a call that ran out of time.
// The podman backend's agent-served files use it too, so a file call that
// runs out of time reads the same whichever side noticed.
func Stopped(op, p string, err error) error {
	msg := "cancelled by the caller"
	if errors.Is(err, context.DeadlineExceeded) {
		msg = "stopped at the call's deadline before finishing (a huge or sparse file, or a large tree?): " +
			"narrow the request to a smaller file or directory, or use a shell command that reads only part of it"
	}
	return &backend.Error{Kind: backend.ErrUnavailable, Op: op, Path: p, Msg: msg, Err: err}
}

// failed maps err for op on p: the context's own error (from a loop that
// noticed it) becomes stopped, anything else goes through mapErr.
func failed(ctx context.Context, op, p string, err error) error {
	if cerr := ctx.Err(); cerr != nil && (errors.Is(err, cerr) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return Stopped(op, p, cerr)
	}
	return mapErr(op, p, err)
}
