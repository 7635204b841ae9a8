package rootfs

import (
	"context"
	"io"

	"github.com/wai-dev/wai/host/backend"
)

// ReadBytes implements backend.BlobReader: at most max bytes of the
// regular file p, opened as Read opens it (symlinks followed inside the
// root, nothing but a regular file), read under ctx's deadline.
func (f *FS) ReadBytes(ctx context.Context, p string, max int64) ([]byte, int64, error) {
	const op = "fs.read_bytes"
	if max < 0 {
		return nil, 0, backend.Errorf(backend.ErrInvalid, op, p, "negative byte limit %d", max)
	}
	root, rel, release, err := f.enter(ctx, op, p)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	file, st, err := f.openRegular(root, op, p, rel)
	if err != nil {
		return nil, 0, err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(&ctxReader{ctx: ctx, r: file}, max))
	if err != nil {
		return nil, 0, mapErr(op, p, err)
	}
	return data, st.Size, nil
}

// Interface guards
var _ backend.BlobReader = (*FS)(nil)
