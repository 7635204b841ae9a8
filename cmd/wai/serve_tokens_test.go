package main

import (
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/config"
	"github.com/wai-dev/wai/internal/syncbuf"
)

// The serve banner names where its tokens came from, and only those: it
// named $WAI_MCP_TOKEN while that was unset, sending the operator to look
// for a token that was not there.
func TestServeBannerNamesTokenSources(t *testing.T) {
	t.Parallel()
	const secret = "0123456789abcdef0123456789abcdef"
	fromFile := config.MCP{TokenEnv: "WAI_MCP_TOKEN", Tokens: []config.MCPToken{{Token: secret, User: "alice"}}}
	fromEnv := config.MCP{TokenEnv: "WAI_MCP_TOKEN"}
	for _, c := range []struct {
		name      string
		mcp       config.MCP
		env       string
		want, not string
	}{
		{"config only", fromFile, "", "1 bearer token(s) configured (1 in [[mcp.tokens]])", "WAI_MCP_TOKEN"},
		{"env only", fromEnv, secret, "1 bearer token(s) configured ($WAI_MCP_TOKEN)", "[[mcp.tokens]]"},
		{"both", fromFile, secret, "2 bearer token(s) configured (1 in [[mcp.tokens]], $WAI_MCP_TOKEN)", ""},
	} {
		var stderr syncbuf.Buffer
		getenv := func(name string) string {
			if name == "WAI_MCP_TOKEN" {
				return c.env
			}
			return ""
		}
		if _, err := configuredTokens(stdio{err: &stderr, getenv: getenv}, c.mcp, "127.0.0.1:0", ""); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := string(stderr.Bytes()); !strings.Contains(got, c.want) || c.not != "" && strings.Contains(got, c.not) {
			t.Errorf("%s: banner %q, want %q and not %q", c.name, got, c.want, c.not)
		}
	}
}
