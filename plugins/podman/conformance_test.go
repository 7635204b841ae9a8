//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	sdktests "github.com/wai-dev/wai/sdk-tests"
)

// conformanceWith runs the sdk-tests suites against real containers of a
// backend configured with extra: every check the host backend takes, plus
// the sandbox ones (host files and processes invisible, no network but
// loopback).
func conformanceWith(name string, extra map[string]any) sdktests.Backend {
	return sdktests.Backend{
		Name: name,
		Open: func(t *testing.T, l backend.Limits) backend.Workspace {
			ws, err := newTestBackend(t, l, extra).Open(t.Context(), backend.WorkspaceSpec{Session: session("conf")})
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
			// Jobs need the agent binary in the container (ErrUnavailable
			// without it: TestJobsNeedTheAgent).
			Jobs:   extra["agent"] != false,
			Reopen: reopener(extra),
			Containers: func(t *testing.T) (backend.Containers, backend.ContainerOwner) {
				return newTestBackend(t, backend.Limits{}, extra), backend.ContainerOwner{Session: session("conf")}
			},
		},
		// Each check with limits of its own starts a container; on 2 shared
		// cores a busy moment can take a while.
		Watchdog: 60 * time.Second,
	}
}

// conformance is the default configuration: commands through wai-agent.
var conformance = conformanceWith("podman", nil)

// conformanceNoAgent runs every command as a Podman exec of its own, the
// path a container without a working agent falls back to.
var conformanceNoAgent = conformanceWith("podman", map[string]any{"agent": false})

func TestShellConformance(t *testing.T) { runShellAlone(t, conformance) }

// runShellAlone runs the shell suite in a process of its own (inChild):
// one of its checks bounds the growth of its process's heap, which the
// parallel tests of this one would skew.
func runShellAlone(t *testing.T, b sdktests.Backend) {
	t.Parallel()
	if inChild(t) {
		sdktests.RunShell(t, b)
	}
}

func TestFilesystemConformance(t *testing.T) {
	t.Parallel()
	sdktests.RunFilesystem(t, conformance)
}
func TestContainersConformance(t *testing.T) {
	t.Parallel()
	sdktests.RunContainers(t, conformance)
}

func TestShellConformanceNoAgent(t *testing.T) { runShellAlone(t, conformanceNoAgent) }
func TestFilesystemConformanceNoAgent(t *testing.T) {
	t.Parallel()
	sdktests.RunFilesystem(t, conformanceNoAgent)
}
