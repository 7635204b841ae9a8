//go:build linux && !(amd64 || arm64)

package agent

import (
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentfs"
	"github.com/wai-dev/wai/internal/agentproto"
)

// fsCache: no confined filesystem on this architecture (rootfs needs
// openat2's system call number, known for amd64 and arm64).
type fsCache struct{}

// startFS answers every file operation with ErrUnavailable.
func (s *Server) startFS(id uint32, req agentproto.FSRequest) error {
	s.sendFS(id, agentproto.FSResponse{Error: agentfs.EncodeError(backend.Errorf(backend.ErrUnavailable, "fs."+req.Op, string(req.Path),
		"wai-agent serves files on amd64 and arm64 only: use a workspace directory on the host (workspace = \"bind\")"))})
	return nil
}
