//go:build linux && (amd64 || arm64)

package host_test

import (
	"context"
	"os/exec"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/plugins/host"
	sdktests "github.com/wai-dev/wai/sdk-tests"
)

var conformance = sdktests.Backend{
	Name: "host",
	Open: func(t *testing.T, l backend.Limits) backend.Workspace {
		b, err := host.New(backend.Options{Limits: l, StateDir: t.TempDir()})
		if err != nil {
			t.Fatalf("host.New: %v", err)
		}
		t.Cleanup(func() { _ = b.Close(context.Background()) })
		ws, err := b.Open(t.Context(), backend.WorkspaceSpec{Session: "conformance"})
		if err != nil {
			t.Fatalf("open host workspace: %v", err)
		}
		return ws
	},
	Caps: sdktests.Caps{
		RealProcesses: true,
		Sandboxed:     false,
		Network:       true,
		Python:        hasPython(),
		HostDir:       func(ws backend.Workspace) string { return ws.(*host.Workspace).Root() },
		Streaming:     true,
	},
}

// hasPython: the host backend's commands see the system PATH, where
// python3 is when the distribution's package is installed.
func hasPython() bool {
	_, err := exec.LookPath("/usr/bin/python3")
	return err == nil
}

func TestShellConformance(t *testing.T)      { sdktests.RunShell(t, conformance) }
func TestFilesystemConformance(t *testing.T) { sdktests.RunFilesystem(t, conformance) }

var jobsConformance = func() sdktests.Backend {
	b := conformance
	b.Caps.Jobs = true
	state := ""
	b.Caps.Reopen = func(t *testing.T, session string) backend.Workspace {
		if state == "" {
			state = t.TempDir()
		}
		hb, err := host.New(backend.Options{Limits: backend.DefaultLimits(), StateDir: state})
		if err != nil {
			t.Fatalf("host.New: %v", err)
		}
		t.Cleanup(func() {
			_ = hb.Close(context.Background())
			_, _ = hb.RemoveSession(context.Background(), session) // kills its jobs
		})
		ws, err := hb.Open(t.Context(), backend.WorkspaceSpec{Session: session, Keep: true})
		if err != nil {
			t.Fatalf("open kept session: %v", err)
		}
		return ws
	}
	return b
}()

func TestJobsConformance(t *testing.T) { sdktests.RunJobs(t, jobsConformance) }
