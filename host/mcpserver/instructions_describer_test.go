package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/mcpserver"
)

// describingBackend is a sandboxed backend an embedder hands in
// (host.WithBackend) that says what its commands find besides the
// workspace. Only its description is read here: it opens no workspace.
type describingBackend struct{}

func (describingBackend) Open(context.Context, backend.WorkspaceSpec) (backend.Workspace, error) {
	return nil, backend.Errorf(backend.ErrUnavailable, "open", "", "the describing test backend opens no workspace")
}
func (describingBackend) Close(context.Context) error { return nil }
func (describingBackend) Info() backend.Info {
	return backend.Info{Backend: "described", Sandboxed: true}
}
func (describingBackend) Environment() backend.Environment {
	return backend.Environment{ScratchDir: "/scratch", ScratchBytes: 24 << 20, ScratchIdle: 11 * time.Minute, Home: "/home/agent"}
}

// The instructions and the workspace prompt a client reads tell the
// environment a handed-in backend describes, as they tell podman's (the
// kernel opens podman by name: TestServerInstructionsOnPodman).
func TestInstructionsTellAHandedInBackendsEnvironment(t *testing.T) {
	t.Parallel()
	cfg := host.DefaultConfig()
	cfg.StateDir = t.TempDir()
	cfg.BundledTools = []string{}
	ctx := context.Background()
	k, err := host.New(ctx, cfg, host.WithBackend(describingBackend{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close(context.Background()) })
	cs := stdioClient(t, serve(t, k, mcpserver.Options{}), nil)
	wants := []string{"Sandboxed Workspace (described backend)",
		"`/scratch` is writable too (24 MiB)", "removed after 11 min without a command",
		"`$HOME` (/home/agent) is not writable"}
	says := func(what, got string) {
		for _, want := range wants {
			if !strings.Contains(got, want) {
				t.Errorf("%s lacks %q:\n%s", what, want, got)
			}
		}
	}
	says("the instructions", cs.InitializeResult().Instructions)
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "workspace"})
	if err != nil {
		t.Fatal(err)
	}
	tc, ok := pr.Messages[0].Content.(*mcp.TextContent)
	if !ok {
		t.Fatalf("the workspace prompt is not text: %+v", pr.Messages[0].Content)
	}
	says("the workspace prompt", tc.Text)
}
