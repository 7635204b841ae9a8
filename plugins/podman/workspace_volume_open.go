//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"os"
	"path"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// openVolume finishes opening a volume workspace (the state file is
// written): the volume is made or adopted, its Filesystem is the agent's
// in the container, and a new volume gets host_mounts at once, copied in
// through the archive API between creating the first container and
// starting it, so that a bad mount fails Open as it does for a directory.
// Nothing is created under workspace_dir but the state file.
func (b *Backend) openVolume(ctx context.Context, w *Workspace, spec backend.WorkspaceSpec) (*Workspace, error) {
	fresh, err := b.makeVolume(ctx, w)
	if err != nil {
		os.Remove(w.statePath)
		return nil, err
	}
	undo := func() {
		ctx := context.WithoutCancel(ctx)
		_ = b.remove(ctx, w.name)
		if fresh {
			_ = removeVolume(ctx, b.svc, w.volume, w.session)
		}
		os.Remove(w.statePath)
	}
	if w.files, err = b.volumeFiles(w); err != nil {
		undo()
		return nil, err
	}
	if fresh && len(b.cfg.HostMounts) > 0 {
		w.hydrate = true
		if _, err := w.ensure(ctx); err != nil {
			undo()
			return nil, err
		}
	}
	if fresh && spec.Keep {
		// wai gc removed this kept session's volume: say so on its first
		// call rather than hand out an empty one unannounced.
		w.noticeRemoved()
	} else {
		_ = os.Remove(tombstonePath(w.statePath))
	}
	w.lastUsed.Store(time.Now().UnixNano())
	return w, nil
}

// volumeCwd is Shell.cwd for a volume workspace: the directory is resolved
// by the Filesystem inside the container, confined to /workspace as the
// file tools are, and must be a directory there.
func (w *Workspace) volumeCwd(ctx context.Context, op, cwd string) (string, error) {
	p := cwd
	if rel, ok := strings.CutPrefix(path.Clean(cwd), ContainerWorkspace); ok && (rel == "" || rel[0] == '/') {
		p = strings.TrimPrefix(rel, "/")
		if p == "" {
			p = "."
		}
	}
	if path.Clean(p) == "." {
		// The workspace itself: the mounted volume is always a directory,
		// so no round trips to the agent to resolve and stat it.
		return ContainerWorkspace, nil
	}
	if r, ok := w.files.(backend.PathResolver); ok {
		real, err := r.ResolvePath(ctx, p, true)
		if err != nil {
			return "", cwdError(op, cwd, err)
		}
		p = real
	}
	fi, err := w.files.Stat(ctx, p)
	if err != nil {
		return "", cwdError(op, cwd, err)
	}
	if fi.Kind != backend.KindDir {
		return "", backend.Errorf(backend.ErrInvalid, op, cwd, "not a directory")
	}
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return ContainerWorkspace, nil
	}
	return ContainerWorkspace + "/" + p, nil
}

// cwdError maps a working directory the workspace lacks to ErrInvalid, as
// for a bind workspace.
func cwdError(op, cwd string, err error) error {
	if errors.Is(err, backend.ErrNotFound) {
		return backend.Errorf(backend.ErrInvalid, op, cwd, "the working directory does not exist in the workspace")
	}
	return err
}
