package backend

import "context"

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
