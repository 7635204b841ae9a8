//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
)

// volumeFS is a volume workspace's Filesystem: the agent's, plus CopyIn
// (backend.CopyInFS, how the kernel copies a person's host directory into
// the workspace) through the archive API, since agent requests carry
// text, not a stream of bytes.
type volumeFS struct {
	*agentFS
}

// Interface guards
var (
	_ backend.Filesystem   = volumeFS{}
	_ backend.PathResolver = volumeFS{}
	_ backend.BlobReader   = volumeFS{}
	_ backend.CopyInFS     = volumeFS{}
)

// CopyIn creates the new regular file p and copies r into it. The agent
// resolves p inside /workspace first (a symlink there is followed as a
// command would, never out) and says whether it exists; the file then
// goes in as a one-file tar stream at its resolved path, owned by the
// container user, missing parents made. A symlink a command plants
// between the two steps can only redirect the file elsewhere inside the
// container (the service resolves archive paths in the container's root),
// never onto the service's machine.
func (f volumeFS) CopyIn(ctx context.Context, p string, r io.Reader, perm fs.FileMode) (int64, error) {
	const op = "fs.copyin"
	if perm&^fs.ModePerm != 0 {
		return 0, backend.Errorf(backend.ErrInvalid, op, p, "perm may only hold permission bits, got %v", perm)
	}
	real, err := f.ResolvePath(ctx, p, true)
	if err != nil {
		return 0, err
	}
	if real == "." || real == "" {
		return 0, backend.Errorf(backend.ErrExist, op, p, "already exists")
	}
	if _, err := f.Stat(ctx, real); err == nil {
		return 0, backend.Errorf(backend.ErrExist, op, p, "already exists")
	} else if !errors.Is(err, backend.ErrNotFound) {
		return 0, err
	}
	src, size, cleanup, err := sized(r)
	if err != nil {
		return 0, backend.Errorf(backend.ErrUnavailable, op, p, "reading the file to copy in: %v", err)
	}
	defer cleanup()
	st, err := f.w.ensure(ctx)
	if err != nil {
		return 0, err
	}
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: real, Size: size, Mode: int64(perm), ModTime: time.Now()})
		if err == nil {
			_, err = io.CopyN(tw, src, size)
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	cctx, err := f.w.b.svc.ctx(ctx)
	if err != nil {
		return 0, err
	}
	put, err := containers.CopyFromArchiveWithOptions(cctx, st.id, ContainerWorkspace, pr, new(containers.CopyOptions).WithChown(true))
	if err == nil {
		err = put()
	}
	if err != nil {
		return 0, f.w.b.svc.wrap(ctx, op, path.Join(ContainerWorkspace, real), err)
	}
	return size, nil
}

// sized returns r with its length, which a tar header needs first: a
// regular file says it; anything else is spooled to a temporary file.
func sized(r io.Reader) (io.Reader, int64, func(), error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return f, fi.Size(), func() {}, nil
		}
	}
	tmp, err := os.CreateTemp("", "wai-copyin-*")
	if err != nil {
		return nil, 0, nil, err
	}
	cleanup := func() { tmp.Close(); os.Remove(tmp.Name()) }
	n, err := io.Copy(tmp, r)
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		cleanup()
		return nil, 0, nil, fmt.Errorf("spooling: %w", err)
	}
	return tmp, n, cleanup, nil
}
