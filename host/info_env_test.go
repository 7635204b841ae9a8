package host

import (
	"context"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// scratchBackend describes a scratch directory that goes after idle.
type scratchBackend struct{ idle time.Duration }

func (scratchBackend) Open(context.Context, backend.WorkspaceSpec) (backend.Workspace, error) {
	return nil, backend.ErrUnavailable
}
func (scratchBackend) Close(context.Context) error { return nil }
func (b scratchBackend) Environment() backend.Environment {
	return backend.Environment{ScratchDir: "/tmp", ScratchIdle: b.idle}
}

// The model is told the sooner of the backend's idle removal and the
// kernel's session_idle_timeout, which stops the sandbox, scratch and all:
// with session_idle_timeout = 10s it was told 15 min and lost /tmp at 10 s.
func TestEnvironmentTellsTheSoonerIdle(t *testing.T) {
	for _, tc := range []struct{ backendIdle, sessionIdle, want time.Duration }{
		{15 * time.Minute, 10 * time.Second, 10 * time.Second},
		{5 * time.Minute, 15 * time.Minute, 5 * time.Minute},
		{0, 15 * time.Minute, 15 * time.Minute}, // the scratch lived with the session
		{15 * time.Minute, 0, 15 * time.Minute}, // no kernel release
	} {
		info := withEnvironment(BackendInfo{}, scratchBackend{idle: tc.backendIdle}, tc.sessionIdle)
		if info.Environment == nil || info.Environment.ScratchIdle != tc.want {
			t.Errorf("backend idle %s, session_idle_timeout %s: told %+v, want %s", tc.backendIdle, tc.sessionIdle, info.Environment, tc.want)
		}
	}
}
