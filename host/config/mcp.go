package config

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/wai-dev/wai/host/backend"
)

// MCP configures `wai serve` ([mcp]).
type MCP struct {
	HTTPAddr string // streamable HTTP listen address
	TokenEnv string // environment variable holding a bearer token (no user)
	// Tokens are the bearer tokens HTTP clients may present, each with the
	// user its sessions run as. With none (and TokenEnv unset), `wai serve
	// --http` creates a token in the state directory.
	Tokens []MCPToken
	// MaxSessions caps the MCP sessions one server holds at once.
	MaxSessions int
	// MaxSessionsPerUser caps the sessions one user holds, so that one
	// user's clients cannot take every place; 0 means SessionsPerUser's
	// even share.
	MaxSessionsPerUser int
	// ClientRoots are the host directories under which an MCP client's
	// roots may be copied into its workspace when its session opens
	// (never mounted); empty ignores client roots.
	ClientRoots []string
}

// MCPToken is one [[mcp.tokens]] entry: a secret, inline or in a file
// only its owner can read, and the user whose sessions it opens.
type MCPToken struct {
	Token     string
	TokenFile string
	User      string
}

// DefaultMCPMaxSessions is mcp.max_sessions when the config does not set
// it: each session may start a container, so a server holds a bounded
// number of them.
const DefaultMCPMaxSessions = 64

// MinMCPTokenBytes is the shortest bearer token wai accepts: 16 bytes, 128
// bits when every byte is random.
const MinMCPTokenBytes = 16

// CheckMCPToken refuses a bearer token that is too short to resist
// guessing or that cannot travel in an HTTP header. what names where the
// token came from, for the message; the token itself is never repeated.
func CheckMCPToken(what, token string) error {
	if len(token) < MinMCPTokenBytes {
		return backend.Errorf(backend.ErrInvalid, "config", "",
			"%s: the bearer token is %d bytes long; it must be at least %d (e.g. `openssl rand -hex 32`)", what, len(token), MinMCPTokenBytes)
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c > '~' {
			return backend.Errorf(backend.ErrInvalid, "config", "",
				"%s: the bearer token has a space, a control or a non-ASCII character at byte %d; use printable ASCII (e.g. `openssl rand -hex 32`)", what, i)
		}
	}
	return nil
}

func (m MCP) validate(path string) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, backend.Errorf(backend.ErrInvalid, "config", path, format, args...))
	}
	if m.HTTPAddr != "" {
		if _, _, err := net.SplitHostPort(m.HTTPAddr); err != nil {
			bad("mcp.http_addr %q is not host:port: %v", m.HTTPAddr, err)
		}
	}
	if m.TokenEnv != "" && !backend.ValidEnvName(m.TokenEnv) {
		bad("mcp.token_env %q is not an environment variable name", m.TokenEnv)
	}
	for i, r := range m.ClientRoots {
		if !filepath.IsAbs(r) {
			bad("mcp.client_roots[%d] %q must be an absolute path", i, r)
		}
	}
	if m.MaxSessions < 1 {
		bad("mcp.max_sessions is %d: it must be at least 1 (default %d)", m.MaxSessions, DefaultMCPMaxSessions)
	}
	if m.MaxSessionsPerUser < 0 || m.MaxSessionsPerUser > max(m.MaxSessions, 1) {
		bad("mcp.max_sessions_per_user is %d: it must be from 1 to max_sessions (%d), or left out for an even share of max_sessions among the users of mcp.tokens", m.MaxSessionsPerUser, m.MaxSessions)
	}
	seen := map[string]int{}
	for i, t := range m.Tokens {
		what := fmt.Sprintf("mcp.tokens[%d]", i)
		switch {
		case (t.Token == "") == (t.TokenFile == ""):
			bad("%s: set exactly one of token and token_file (a file only you can read is safer than a secret in the config)", what)
		case t.Token != "":
			if err := CheckMCPToken(what, t.Token); err != nil {
				errs = append(errs, err)
			} else if j, dup := seen[t.Token]; dup {
				bad("%s has the same token as mcp.tokens[%d]: give each user its own token", what, j)
			}
			seen[t.Token] = i
		}
		if t.User != "" {
			if err := (backend.WorkspaceSpec{Session: "s", User: t.User}).Validate(); err != nil {
				bad("%s: user: %v", what, err)
			}
		}
	}
	return errs
}

// SessionsPerUser is the cap on one user's MCP sessions: MaxSessionsPerUser
// when set, else an even share of MaxSessions among the users
// [[mcp.tokens]] name (tokens without a user, and the environment's token,
// are one user), at least 1; with no tokens, one user holds them all. A
// share and not the whole cap by default: with one pool for everyone, one
// user's clients could hold every place and lock the others out.
func (m MCP) SessionsPerUser() int {
	if m.MaxSessionsPerUser > 0 {
		return m.MaxSessionsPerUser
	}
	users := map[string]bool{}
	for _, t := range m.Tokens {
		users[t.User] = true
	}
	return max(1, m.MaxSessions/max(1, len(users)))
}
