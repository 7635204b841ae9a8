package mcpserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/config"
)

// A token file others can read is refused with the fix for whose file it
// is: wai makes its own token anew when it is removed, but not an
// operator's token_file, which was told "remove the token file so wai
// makes a new one".
func TestTokenFileModeAdvice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const secret = "0123456789abcdef0123456789abcdef"
	own := filepath.Join(dir, "state", "mcp", "token")
	if _, _, err := LoadOrCreateTokenFile(own); err != nil {
		t.Fatal(err)
	}
	operators := filepath.Join(dir, "operator-token")
	if err := os.WriteFile(operators, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{own, operators} {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := LoadTokens(config.MCP{Tokens: []config.MCPToken{{TokenFile: operators, User: "alice"}}}, "", os.Getenv)
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "`chmod 600 "+operators+"`") ||
		!strings.Contains(err.Error(), "write a new token into it") || strings.Contains(err.Error(), "wai makes a new one") {
		t.Errorf("operator's token_file at 0644: %v, want chmod 600 and a new token written by the operator", err)
	}
	_, _, err = LoadOrCreateTokenFile(own)
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "`chmod 600 "+own+"`") || !strings.Contains(err.Error(), "wai makes a new one") {
		t.Errorf("wai's own token file at 0644: %v, want chmod 600 or removal", err)
	}
}
