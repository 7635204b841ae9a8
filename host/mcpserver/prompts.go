package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The workspace prompt: for clients that offer prompts to the person
// rather than (or besides) passing the server's instructions to the model,
// the same description of the sandbox, its tools and its host mounts,
// rendered from the kernel's live backend when asked for.
func (s *Server) addPrompts() {
	s.mcp.AddPrompt(&mcp.Prompt{
		Name:  "workspace",
		Title: "wai workspace",
		Description: "Describes the workspace the agent works in: whether it is sandboxed, its tools, " +
			"and the host directories copied into it (the mount table).",
	}, s.workspacePrompt)
}

func (s *Server) workspacePrompt(ctx context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	text := instructionsFor(s.k)
	if info, err := s.k.Info(ctx); err == nil {
		text = instructionsText(info, s.k.Tools())
	}
	return &mcp.GetPromptResult{
		Description: "The wai workspace: what the agent can and cannot do in it",
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
	}, nil
}
