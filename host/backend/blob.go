package backend

import (
	"context"
	"io"
	"io/fs"
)

// BlobReader is implemented by a Filesystem that can read a file's bytes
// as they are (Read returns text lines): what a front end needs to hand a
// person an image the agent made. Symlinks are followed inside the root,
// as Read follows them.
type BlobReader interface {
	// ReadBytes returns at most max bytes from the start of the regular
	// file path, and the file's size (more than len(data) when it was
	// cut).
	ReadBytes(ctx context.Context, path string, max int64) (data []byte, size int64, err error)
}

// CopyInFS is implemented by a Filesystem that can stream a new file in
// from outside the workspace (rootfs.FS): how the kernel copies host
// directories a person offered into a workspace, never mounting them.
type CopyInFS interface {
	// CopyIn creates the new regular file p (parents included) with perm
	// and copies r into it; an existing p is ErrExist.
	CopyIn(ctx context.Context, p string, r io.Reader, perm fs.FileMode) (int64, error)
}
