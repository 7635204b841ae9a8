package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/config"
)

func TestMCPConfigLoad(t *testing.T) {
	cfg, err := config.Parse([]byte(`
[mcp]
max_sessions = 3

[[mcp.tokens]]
token = "0123456789abcdef-alice"
user = "alice"

[[mcp.tokens]]
token_file = "/etc/wai/bob.token"
user = "bob"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []config.MCPToken{{Token: "0123456789abcdef-alice", User: "alice"}, {TokenFile: "/etc/wai/bob.token", User: "bob"}}
	if cfg.MCP.MaxSessions != 3 || len(cfg.MCP.Tokens) != 2 || cfg.MCP.Tokens[0] != want[0] || cfg.MCP.Tokens[1] != want[1] {
		t.Errorf("mcp: %+v", cfg.MCP)
	}
	if def := config.Default(); def.MCP.MaxSessions != 64 {
		t.Errorf("default max_sessions %d, want 64", def.MCP.MaxSessions)
	}
}

// By default each user [[mcp.tokens]] names gets an even share of
// max_sessions, so one user's clients cannot lock the others out; the key
// sets it outright.
func TestMCPSessionsPerUser(t *testing.T) {
	for _, tc := range []struct {
		toml string
		want int
	}{
		{"", 64},
		{"[mcp]\nmax_sessions = 2\n[[mcp.tokens]]\ntoken_file = \"/a\"\nuser = \"alice\"\n[[mcp.tokens]]\ntoken_file = \"/b\"\nuser = \"bob\"", 1},
		{"[mcp]\nmax_sessions = 64\n[[mcp.tokens]]\ntoken_file = \"/a\"\nuser = \"alice\"\n[[mcp.tokens]]\ntoken_file = \"/a2\"\nuser = \"alice\"\n[[mcp.tokens]]\ntoken_file = \"/b\"\nuser = \"bob\"", 32},
		{"[mcp]\nmax_sessions = 3\nmax_sessions_per_user = 3\n[[mcp.tokens]]\ntoken_file = \"/a\"\nuser = \"alice\"\n[[mcp.tokens]]\ntoken_file = \"/b\"\nuser = \"bob\"", 3},
	} {
		cfg, err := config.Parse([]byte(tc.toml))
		if err != nil {
			t.Fatalf("%q: %v", tc.toml, err)
		}
		if got := cfg.MCP.SessionsPerUser(); got != tc.want {
			t.Errorf("%q: %d sessions per user, want %d", tc.toml, got, tc.want)
		}
	}
}

// A token too short to resist guessing is refused when the config loads,
// with what to do and never the token itself.
func TestMCPConfigRefusals(t *testing.T) {
	for _, tc := range []struct{ name, toml, want string }{
		{"one-character token", "[[mcp.tokens]]\ntoken = \"x\"", "must be at least 16"},
		{"15-byte token", "[[mcp.tokens]]\ntoken = \"0123456789abcde\"", "15 bytes long"},
		{"token with a space", "[[mcp.tokens]]\ntoken = \"0123456789 abcdef\"", "printable ASCII"},
		{"token and token_file", "[[mcp.tokens]]\ntoken = \"0123456789abcdef\"\ntoken_file = \"/x\"", "exactly one of token and token_file"},
		{"neither", "[[mcp.tokens]]\nuser = \"alice\"", "exactly one of token and token_file"},
		{"bad user", "[[mcp.tokens]]\ntoken = \"0123456789abcdef\"\nuser = \"../root\"", "user"},
		{"same token twice", "[[mcp.tokens]]\ntoken = \"0123456789abcdef\"\n[[mcp.tokens]]\ntoken = \"0123456789abcdef\"", "same token"},
		{"zero sessions", "[mcp]\nmax_sessions = 0", "max_sessions is 0"},
		{"per-user cap over the server's", "[mcp]\nmax_sessions = 4\nmax_sessions_per_user = 5", "max_sessions_per_user is 5"},
		{"negative per-user cap", "[mcp]\nmax_sessions_per_user = -1", "max_sessions_per_user is -1"},
		{"unknown key", "[[mcp.tokens]]\ntoken = \"0123456789abcdef\"\nusr = \"a\"", "usr"},
	} {
		_, err := config.Parse([]byte(tc.toml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want an error saying %q, got %v", tc.name, tc.want, err)
			continue
		}
		if strings.Contains(err.Error(), "0123456789") {
			t.Errorf("%s: the error repeats the token: %v", tc.name, err)
		}
	}
}

// The variable [mcp] token_env names holds wai serve's bearer token: the
// kernel keeps it out of every container's environment (SecretEnv).
func TestMCPTokenEnvIsSecret(t *testing.T) {
	cfg, err := config.Parse([]byte("[mcp]\ntoken_env = \"SERVE_BEARER_TOKEN\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Kernel().SecretEnv; !slices.Contains(got, "SERVE_BEARER_TOKEN") {
		t.Errorf("SecretEnv %q does not hold the token_env variable", got)
	}
}
