//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	sdktests "github.com/wai-dev/wai/sdk-tests"
)

// agentFSWorkspace is a session whose files are served by its agent, as
// a workspace that is no host directory has them: the workspace is still
// a bind-mounted host directory here, so the suite can plant what a
// command of the sandbox could, and look behind the agent's back.
type agentFSWorkspace struct{ *Workspace }

func (w agentFSWorkspace) FS() backend.Filesystem { return w.agentFS() }

// openAgentFS opens a session whose FS is served by the agent.
func openAgentFS(t *testing.T, l backend.Limits, extra map[string]any) agentFSWorkspace {
	t.Helper()
	ws, err := newTestBackend(t, l, extra).Open(t.Context(), backend.WorkspaceSpec{Session: session("agentfs")})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return agentFSWorkspace{ws.(*Workspace)}
}

// conformanceAgentFS is the filesystem suite against the agent's files.
var conformanceAgentFS = sdktests.Backend{
	Name: "podman",
	Open: func(t *testing.T, l backend.Limits) backend.Workspace { return openAgentFS(t, l, nil) },
	Caps: sdktests.Caps{
		RealProcesses: true,
		Sandboxed:     true,
		Python:        true,
		HostDir:       func(ws backend.Workspace) string { return ws.(agentFSWorkspace).Dir() },
		Streaming:     true,
	},
	Watchdog: 60 * time.Second,
}

func TestFilesystemConformanceAgentFS(t *testing.T) { sdktests.RunFilesystem(t, conformanceAgentFS) }
