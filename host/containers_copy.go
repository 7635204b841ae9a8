package host

import (
	"context"
	"path/filepath"

	"github.com/wai-dev/wai/host/backend"
)

// copyOp runs copy_in or copy_out. A relative host_path is in the session
// workspace, which opens first. copy_out writes there, past the file
// functions, so it is also put to the policies as the fs.write of that
// path a write would be (checkMutation): a policy that keeps writes out of
// .git/hooks, or inside a subtree, holds for copy_out too. An absolute
// host_path is not a workspace path, and this cannot tell whether it
// lies in the workspace's host directory: the backend refuses one there
// (so only relative paths, judged here, reach the workspace) and confines
// the rest to allowed_host_roots (writing there needs allow_write_mounts).
func (s *Session) copyOp(ctx context.Context, c backend.Containers, ref backend.ContainerRef, req ContainerRequest) (*backend.ContainerCopyResult, error) {
	cp := backend.ContainerCopy{HostPath: req.HostPath, ContainerPath: req.ContainerPath}
	if !filepath.IsAbs(req.HostPath) {
		ws, _, err := s.workspace(ctx)
		if err != nil {
			return nil, err
		}
		// An empty host_path is the backend's to refuse; no policy
		// judging fs.write: nothing to resolve for it.
		if req.Operation == "copy_out" && req.HostPath != "" && s.k.chain.judges(ActionFSWrite) {
			if _, err := s.checkMutation(ctx, ws.FS(), ActionContainersPrefix+req.Operation, ActionFSWrite, req.HostPath, true); err != nil {
				return nil, err
			}
		}
	}
	var res backend.ContainerCopyResult
	var err error
	if req.Operation == "copy_in" {
		res, err = c.CopyToContainer(ctx, ref, cp)
	} else {
		res, err = c.CopyFromContainer(ctx, ref, cp)
	}
	return &res, err
}
