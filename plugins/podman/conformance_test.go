//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	sdktests "github.com/wai-dev/wai/sdk-tests"
)

// conformance runs the sdk-tests suites against real containers: every
// check the host backend takes, plus the sandbox ones (host files and
// processes invisible, no network but loopback).
var conformance = sdktests.Backend{
	Name: "podman",
	Open: func(t *testing.T, l backend.Limits) backend.Workspace {
		ws, err := newTestBackend(t, l, nil).Open(t.Context(), backend.WorkspaceSpec{Session: session("conf")})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return ws
	},
	Caps: sdktests.Caps{
		RealProcesses: true,
		Sandboxed:     true,
		Python:        true, // the test image has python3
		Network:       false,
		HostDir:       func(ws backend.Workspace) string { return ws.(*Workspace).Dir() },
		Streaming:     true,
		Containers: func(t *testing.T) (backend.Containers, backend.ContainerOwner) {
			return newTestBackend(t, backend.Limits{}, nil), backend.ContainerOwner{Session: session("conf")}
		},
	},
	// Each check with limits of its own starts a container; on 2 shared
	// cores a busy moment can take a while.
	Watchdog: 60 * time.Second,
}

func TestShellConformance(t *testing.T)      { sdktests.RunShell(t, conformance) }
func TestFilesystemConformance(t *testing.T) { sdktests.RunFilesystem(t, conformance) }
func TestContainersConformance(t *testing.T) { sdktests.RunContainers(t, conformance) }
