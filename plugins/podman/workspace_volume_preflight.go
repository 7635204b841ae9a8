//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"os"
)

// volumeWorkspaceCheck is preflight's check of volume workspaces: a new
// session gets its volume (with workspace_size, the service must be able
// to enforce it), a marker written through the file tools' side (wai-agent
// in the container) is what a command in the container reads, and wai's
// machine holds no workspace directory for it.
func volumeWorkspaceCheck(ctx context.Context, cfg Config) Check {
	c := Check{Name: "workspace volume on service"}
	fix := "see the error; docs/REMOTE.md describes volume workspaces (or set workspace = \"bind\" with a workspace_dir shared at the same path)"
	unseen := "a command in the container does not see the file wai-agent wrote into its volume"
	return markerCheck(ctx, cfg, c, fix, ".wai-volume", unseen, func(c Check, w *Workspace) Check {
		if _, err := os.Lstat(w.dir); err == nil {
			c.Status, c.Fix = CheckFail, fix
			c.Detail = "a volume workspace made the directory " + w.dir + " on wai's machine"
			return c
		}
		c.Status = CheckOK
		limit := "no size limit (workspace_size = \"0\")"
		if cfg.workspaceBytes > 0 {
			limit = "at most " + formatBytes(cfg.workspaceBytes) + ", enforced by the service"
		}
		c.Detail = "sessions' files live in Podman volumes on the service's machine, " + limit
		return c
	})
}
