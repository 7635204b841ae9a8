//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
)

// Every file wai puts into or takes out of a container, running or only
// created, crosses the service connection as a tar stream of the archive
// API: that works the same for a service on another machine, where no path
// is shared. These are the two ends of it; what the streams hold is each
// caller's business.

// putArchive extracts the tar stream r at dir in container id, the files
// owned by the container's user (copyUIDGID, the libpod default, said
// explicitly so that it cannot change under wai).
func (b *Backend) putArchive(ctx context.Context, op, id, dir string, r io.Reader) error {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return err
	}
	put, err := containers.CopyFromArchiveWithOptions(cctx, id, dir, r, new(containers.CopyOptions).WithChown(true))
	if err == nil {
		err = put()
	}
	return b.svc.wrap(ctx, op, dir, err)
}

// putStream uploads what write writes, as it writes it, to dir in
// container id. A failure of write is reported in preference to the broken
// upload it causes: it is the cause (a file that changed, a budget
// exceeded); a write that failed only because the upload ended first
// reports the upload's error.
func (b *Backend) putStream(ctx context.Context, op, id, dir string, write func(io.Writer) error) error {
	pr, pw := io.Pipe()
	werr := make(chan error, 1)
	go func() {
		err := write(pw)
		pw.CloseWithError(err)
		werr <- err
	}()
	err := b.putArchive(ctx, op, id, dir, pr)
	pr.Close() // unblocks the writer if the upload ended early
	if wErr := <-werr; wErr != nil && !errors.Is(wErr, io.ErrClosedPipe) {
		return wErr
	}
	return err
}

// getArchive streams path p of container id out as a tar archive; a
// missing p is ErrNotFound. Closing the reader ends the download.
func (b *Backend) getArchive(ctx context.Context, op, id, p string) (io.ReadCloser, error) {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	get, err := containers.CopyToArchive(cctx, id, p, pw)
	if err != nil {
		if notFound(err) || strings.Contains(err.Error(), "no such file") {
			return nil, backend.Errorf(backend.ErrNotFound, op, p, "no such file in the container")
		}
		return nil, b.svc.wrap(ctx, op, p, err)
	}
	go func() { pw.CloseWithError(get()) }()
	return pr, nil
}

// archiveFile is a file wai writes into a container from memory.
type archiveFile struct {
	name string
	mode int64
	body []byte
}

// addTarFile writes f to tw as a regular file.
func addTarFile(tw *tar.Writer, f archiveFile, modTime time.Time) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.body)), ModTime: modTime}); err != nil {
		return err
	}
	_, err := tw.Write(f.body)
	return err
}
