package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/mcpserver"
	_ "github.com/wai-dev/wai/plugins/mock"
)

// Served on the mock backend, the model is told that nothing runs and
// results are canned. It was told of a sandboxed workspace without
// network, and took every canned "success" for a command that ran.
func TestInstructionsOnTheMockBackend(t *testing.T) {
	t.Parallel()
	cfg := host.DefaultConfig()
	cfg.Backend = "mock"
	cfg.StateDir = t.TempDir()
	cfg.BundledTools = []string{}
	ctx := context.Background()
	k, err := host.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close(context.Background()) })
	got := stdioClient(t, serve(t, k, mcpserver.Options{}), nil).InitializeResult().Instructions
	for _, want := range []string{"Simulated Workspace: COMMANDS ARE NOT RUN", "mock backend", "no command is run", "canned result"} {
		if !strings.Contains(got, want) {
			t.Errorf("instructions lack %q:\n%s", want, got)
		}
	}
	for _, wrong := range []string{"Sandboxed Workspace", "isolated workspace", "No network access"} {
		if strings.Contains(got, wrong) {
			t.Errorf("instructions on the mock say %q:\n%s", wrong, got)
		}
	}
}
