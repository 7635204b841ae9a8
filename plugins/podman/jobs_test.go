//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	sdktests "github.com/wai-dev/wai/sdk-tests"
)

// jobsConformance is the default configuration with jobs declared, and
// Reopen opening a kept session on a Backend instance of its own each
// time (sharing the state directory, as two wai processes do).
var jobsConformance = func() sdktests.Backend {
	b := conformance
	b.Caps.Jobs = true
	state := ""
	b.Caps.Reopen = func(t *testing.T, session string) backend.Workspace {
		needPodman(t)
		if state == "" {
			state = t.TempDir()
		}
		pb, err := New(bg, backend.Options{Config: testConfig(t, nil), StateDir: state, Limits: backend.DefaultLimits()})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(bg, time.Minute)
			defer cancel()
			_ = pb.Close(ctx)
			_, _ = pb.RemoveSession(ctx, session) // removes the container and its jobs
		})
		ws, err := pb.Open(t.Context(), backend.WorkspaceSpec{Session: session, Keep: true})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return ws
	}
	return b
}()

func TestJobsConformance(t *testing.T) { sdktests.RunJobs(t, jobsConformance) }
