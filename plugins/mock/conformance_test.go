package mock_test

import (
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/plugins/mock"
	sdktests "github.com/wai-dev/wai/sdk-tests"
)

var conformance = sdktests.Backend{
	Name: mock.Name,
	Open: func(t *testing.T, l backend.Limits) backend.Workspace {
		ws, err := mock.New(mock.Options{Limits: l}).Open(t.Context(), backend.WorkspaceSpec{Session: "conformance"})
		if err != nil {
			t.Fatalf("open mock workspace: %v", err)
		}
		return ws
	},
	// No real processes: the suites run the contract part (validation,
	// errors, info, the whole filesystem) and skip process checks.
	Caps: sdktests.Caps{Sandboxed: true},
}

func TestShellConformance(t *testing.T)      { sdktests.RunShell(t, conformance) }
func TestFilesystemConformance(t *testing.T) { sdktests.RunFilesystem(t, conformance) }
