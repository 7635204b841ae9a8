package mcpserver_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The workspace prompt is listed and renders the server's description of
// the workspace: on the host backend, the warning that nothing is
// sandboxed.
func TestWorkspacePrompt(t *testing.T) {
	ctx := context.Background()
	cs := stdioClient(t, newServer(t), nil)
	lp, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(lp.Prompts) != 1 || lp.Prompts[0].Name != "workspace" {
		t.Fatalf("prompts/list: %v %+v", err, lp)
	}
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "workspace"})
	if err != nil {
		t.Fatal(err)
	}
	tc, ok := pr.Messages[0].Content.(*mcp.TextContent)
	if !ok || pr.Messages[0].Role != "user" || tc.Text != cs.InitializeResult().Instructions {
		t.Errorf("the prompt differs from the instructions:\n%+v\nvs\n%s", pr.Messages[0], cs.InitializeResult().Instructions)
	}
}
