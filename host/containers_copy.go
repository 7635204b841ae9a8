package host

import (
	"context"
	"path/filepath"

	"github.com/wai-dev/wai/host/backend"
)

// copyOp runs copy_in or copy_out. A relative host_path is in the session
// workspace, which exists once opened.
func (s *Session) copyOp(ctx context.Context, c backend.Containers, ref backend.ContainerRef, req ContainerRequest) (*backend.ContainerCopyResult, error) {
	cp := backend.ContainerCopy{HostPath: req.HostPath, ContainerPath: req.ContainerPath}
	if !filepath.IsAbs(req.HostPath) {
		if _, _, err := s.workspace(ctx); err != nil {
			return nil, err
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
