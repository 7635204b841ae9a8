package host

import (
	"context"

	"github.com/wai-dev/wai/host/backend"
)

// onOneContainer are the operations on one named container.
var onOneContainer = map[string]bool{"exec": true, "exec_interactive_hint": true, "status": true, "start": true,
	"stop": true, "destroy": true, "copy_in": true, "copy_out": true, "exec_background": true, "exec_poll": true,
	"exec_cancel": true, "snapshot": true}

// checkReach keeps a session to what list shows it: its own containers and
// the user's persistent ones. Another session's non-persistent container
// is that session's working state (two MCP clients of one person each
// run their own); a model that guessed its name could otherwise exec in
// it, stop it or destroy it under the other agent. The operator's CLI
// (AllSessions) reaches every container of the user.
func (s *Session) checkReach(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, req ContainerRequest) error {
	if req.AllSessions || req.Container == "" || !onOneContainer[req.Operation] {
		return nil
	}
	info, err := c.ContainerStatus(ctx, backend.ContainerRef{Owner: owner, Name: req.Container}, false)
	if err != nil {
		return nil // the operation itself says it (not found, unavailable)
	}
	if info.Session == "" || info.Session == owner.Session || info.Persistent {
		return nil
	}
	return backend.Errorf(backend.ErrNotFound, ActionContainersPrefix+req.Operation, req.Container,
		"no such container in this session: another session made it for its own use (not persistent); "+
			"list shows the containers you can use, and create makes one (persistent = true lets it outlive the session)")
}
