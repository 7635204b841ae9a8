//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
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

// putStream uploads, as a tar stream to dir in container id, the entries
// write writes, as it writes them, and ends the stream itself.
func (b *Backend) putStream(ctx context.Context, op, id, dir string, write func(*tar.Writer) error) error {
	err := streamUpload(func(r io.Reader) error { return b.putArchive(ctx, op, id, dir, r) }, write)
	if errors.Is(err, errShortUpload) {
		return backend.Errorf(backend.ErrUnavailable, op, dir, "%v: try again", err)
	}
	return err
}

// errShortUpload is an upload the service answered, as a success, before
// it had every entry: what it reported done is not what was sent.
var errShortUpload = errors.New("the service ended the upload before every file was sent")

// streamUpload runs upload over a pipe that write's entries fill. A failure
// of write is reported in preference to the broken upload it causes: it is
// the cause (a file that changed, a budget exceeded). Entries that could
// not be written because the upload had ended are a failure even when the
// upload reports none; only the archive's trailer may go unread.
func streamUpload(upload func(io.Reader) error, write func(*tar.Writer) error) error {
	pr, pw := io.Pipe()
	werr := make(chan error, 1)
	go func() {
		tw := tar.NewWriter(pw)
		err := write(tw)
		if err == nil {
			if err = tw.Close(); errors.Is(err, io.ErrClosedPipe) {
				err = nil // every entry was read; the end marker is a formality
			}
		}
		pw.CloseWithError(err)
		werr <- err
	}()
	err := upload(pr)
	pr.Close() // unblocks the writer if the upload ended early
	switch wErr := <-werr; {
	case wErr == nil:
		return err
	case !errors.Is(wErr, io.ErrClosedPipe):
		return wErr
	case err == nil:
		return errShortUpload
	default:
		return err
	}
}

// missingInContainer is the error for a path the archive API did not
// find: a symlink whose target is missing is said to be one (its stat
// comes with the service's "not found"), as "no such file" would send the
// caller looking for a name that is there.
func (b *Backend) missingInContainer(cctx context.Context, op, id, p string) error {
	if st, _ := containers.Stat(cctx, id, p); st != nil && st.Mode&os.ModeSymlink != 0 {
		return backend.Errorf(backend.ErrNotFound, op, p, "it is a symlink to %s, which does not exist in the container: copy the target, or fix the link", st.LinkTarget)
	}
	return backend.Errorf(backend.ErrNotFound, op, p, "no such file in the container")
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
			return nil, b.missingInContainer(cctx, op, id, p)
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
