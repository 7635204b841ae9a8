//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// sharedWorkspaceCheck is preflight's check for a service that is not a
// local socket: a session's workspace is a directory on wai's machine,
// bind-mounted by path on the service's machine, so the two must be the
// same files (shared storage at the same path) until volume workspaces
// lift that. It writes a random marker through the file tools' side and
// reads it from inside a container.
func sharedWorkspaceCheck(ctx context.Context, cfg Config) Check {
	c := Check{Name: "workspace shared with service"}
	fix := "mount " + cfg.WorkspaceDir + " from shared storage at the same path on wai's machine and the service's, " +
		"or use workspace = \"volume\" (the default for ssh:// and tcp:// services; see docs/REMOTE.md)"
	unseen := "a container on the service's machine does not see the file wai wrote to " + cfg.WorkspaceDir +
		": the workspace directory is not the same files at the same path there"
	return markerCheck(ctx, cfg, c, fix, ".wai-shared", unseen, func(c Check, _ *Workspace) Check {
		c.Status = CheckOK
		c.Detail = "the service's containers see wai's files under " + cfg.WorkspaceDir + " at the same path"
		return c
	})
}

// markerCheck opens a throwaway session, writes a random marker to file
// through the file tools' side and reads it back with a command in the
// container. A failure on the way fails c with fix; a marker the command
// does not read fails it with unseen, what that means for the check;
// judge has the last word on a workspace that passed.
func markerCheck(ctx context.Context, cfg Config, c Check, fix, file, unseen string,
	judge func(c Check, w *Workspace) Check) Check {
	return inThrowawaySession(ctx, cfg, c, fix, fix, func(ctx context.Context, ws backend.Workspace, _ time.Time) Check {
		marker := newSecret()
		if _, err := ws.FS().Write(ctx, backend.WriteRequest{Path: file, Content: marker}); err != nil {
			c.Status, c.Detail, c.Fix = CheckFail, "writing a marker into the workspace: "+err.Error(), fix
			return c
		}
		res, err := ws.Shell().Execute(ctx, backend.ExecRequest{Shell: "cat /workspace/" + file + " 2>&1"})
		if err != nil {
			c.Status, c.Detail, c.Fix = CheckFail, err.Error(), fix
			return c
		}
		if strings.TrimSpace(res.Stdout) != marker {
			c.Status, c.Fix = CheckFail, fix
			c.Detail = fmt.Sprintf("%s (it read %q)", unseen, firstLine(res.Stdout))
			return c
		}
		return judge(c, ws.(*Workspace))
	})
}
