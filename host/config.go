package host

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Config is everything wai.toml can say. DefaultConfig returns the defaults
// every key of wai.example.toml shows; LoadConfig overlays a file on them.
//
// Directories left empty are resolved when a Kernel is built (StateDir,
// PluginDir), so a Config stays a plain description of the file.
type Config struct {
	// Backend names the execution backend: "podman" (the default), "host"
	// or "mock". The host backend is not a sandbox: it runs only when named
	// here, by --backend, or as Fallback.
	Backend string
	// Fallback is "" or "host": the backend used only when Backend is
	// unavailable (ErrUnavailable). Everything then reports unsandboxed.
	Fallback string
	// StateDir holds workspaces and caches; "" means $XDG_CACHE_HOME/wai,
	// else ~/.cache/wai.
	StateDir string
	// PluginDir is where bundled plugins (*.wasm) are found; "" means
	// $WAI_PLUGIN_DIR, else <dir of the executable>/plugins, else
	// ./build/plugins.
	PluginDir string
	// AuditLog, when set, receives every event as one JSON line.
	AuditLog string
	// SessionIdleTimeout releases the sandbox (a container) of sessions
	// unused for longer, never their files; 0 never does.
	SessionIdleTimeout time.Duration
	// ReadBeforeWrite: an existing file must have been read in this
	// session before it is edited, overwritten or appended to.
	ReadBeforeWrite bool
	// PolicyTimeout bounds one policy check; a policy that takes longer
	// denies.
	PolicyTimeout time.Duration
	Limits        backend.Limits
	// SessionConcurrentCalls caps the tool calls one session runs at once
	// ([limits] session_concurrent_calls); one more waits for a slot until
	// its deadline, then fails with ErrUnavailable.
	SessionConcurrentCalls int
	// PluginMemoryBudget caps the guest memory, in bytes, of all Wasm
	// plugin instances together ([limits] plugin_memory_budget). Each
	// session gets its own instances; past the budget a call fails with
	// ErrUnavailable once idle instances are closed to make room.
	PluginMemoryBudget int64
	// ToolTimeouts maps a tool name to its deadline; "default" applies to
	// tools not named. A caller can shorten a deadline, never extend it.
	ToolTimeouts map[string]time.Duration
	// SoftTimeouts gives command tools a soft timeout ([soft_timeouts.TOOL]):
	// when a command of the tool has run that long, a person is asked
	// whether to extend it, else Unattended decides; HardCap always stops
	// it. Tools not named have none.
	SoftTimeouts map[string]SoftTimeout
	// DisabledTools are never offered nor callable.
	DisabledTools []string
	// Backends holds each backend's own table ([backends.NAME]), passed to
	// it as JSON; the backend rejects keys it does not know.
	Backends map[string]map[string]any
	Plugins  []PluginConfig
	Policies []PolicyConfig
	// BundledTools are tool plugins loaded from PluginDir by name.
	BundledTools []string
	// DefaultPolicies are bundled policies that run before Policies.
	DefaultPolicies []string
	MCP             MCPConfig

	// Path is the file the config was loaded from; empty for defaults.
	Path string

	// backendLines maps keys inside [backends.NAME] tables to their lines
	// in the file, for the errors of a backend's parser; nil for a Config
	// built in Go.
	backendLines map[string]int
}

// PluginConfig is one [[plugins]] entry: a tool plugin from a file.
type PluginConfig struct {
	Name   string // optional; checked against the plugin's own name
	Path   string
	SHA256 string // optional pin: loading fails when the file differs
	// Grants are the capabilities the plugin may use ("shell", "fs.read",
	// "fs.write", ...). A host function it imports without a grant makes
	// loading fail.
	Grants []string
	Config map[string]any
	// Aliases renames tools: {tool = "new_name"}. It is how two plugins
	// exporting the same tool name can both be loaded.
	Aliases map[string]string
}

// PolicyConfig is one [[policies]] entry: a bundled policy by Name, or a
// policy plugin from Path.
type PolicyConfig struct {
	Name   string
	Path   string
	SHA256 string
	Config map[string]any
}

// MCPConfig configures `wai serve`.
type MCPConfig struct {
	HTTPAddr string // streamable HTTP listen address
	TokenEnv string // environment variable holding a bearer token (no user)
	// Tokens are the bearer tokens HTTP clients may present, each with the
	// user its sessions run as. With none (and TokenEnv unset), `wai serve
	// --http` creates a token in the state directory.
	Tokens []MCPToken
	// MaxSessions caps the MCP sessions one server holds at once.
	MaxSessions int
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

// BundledPolicies are the policy names that need no path.
var BundledPolicies = []string{"blocklist", "allowlist"}

// Bounds of the plugin instance limits: a session running more calls at
// once than this is a runaway, and a budget below a few instances (one is
// ~5 MiB) would refuse the first calls.
const (
	maxSessionConcurrentCalls       = 1024
	minPluginMemoryBudget     int64 = 32 << 20
)

// BundledToolPlugins are the tool plugins bundled_tools may name; any other
// tool plugin is loaded from its path with [[plugins]].
var BundledToolPlugins = []string{"shell", "vfs", "python", "podman_shell"}

// DefaultToolTimeout applies to tools ToolTimeouts does not name.
const DefaultToolTimeout = 60 * time.Second

// commandToolTimeout bounds the bundled tools that accept a command timeout
// of up to 120 s: the call's deadline must outlive the command's, or a
// command the model was allowed to run for 120 s would be cut at 60 s
// without its timed_out result and partial output.
const commandToolTimeout = 125 * time.Second

// DefaultConfig returns the configuration wai runs with when no file says
// otherwise. wai.example.toml shows exactly these values; a test keeps the
// two in step.
func DefaultConfig() Config {
	return Config{
		Backend:            "podman",
		SessionIdleTimeout: 15 * time.Minute,
		ReadBeforeWrite:    true,
		PolicyTimeout:      time.Second,
		Limits:             backend.DefaultLimits(),
		// One session's calls cannot take every instance another session
		// needs; 64 sessions × three ~10 MiB instances fit the budget.
		SessionConcurrentCalls: 8,
		PluginMemoryBudget:     2 << 30,
		ToolTimeouts: map[string]time.Duration{
			"default":       DefaultToolTimeout,
			"shell_execute": commandToolTimeout,
			"podman_shell":  commandToolTimeout,
		},
		DisabledTools:   []string{},
		Backends:        map[string]map[string]any{},
		Plugins:         []PluginConfig{},
		Policies:        []PolicyConfig{},
		BundledTools:    []string{"shell", "vfs", "python", "podman_shell"},
		DefaultPolicies: []string{"blocklist"},
		MCP:             MCPConfig{HTTPAddr: "127.0.0.1:8765", TokenEnv: "WAI_MCP_TOKEN", MaxSessions: DefaultMCPMaxSessions},
	}
}

// ToolTimeout returns the deadline of a tool: its own entry, else the
// "default" entry, else DefaultToolTimeout.
func (c Config) ToolTimeout(tool string) time.Duration {
	if d, ok := c.ToolTimeouts[tool]; ok && d > 0 {
		return d
	}
	if d, ok := c.ToolTimeouts["default"]; ok && d > 0 {
		return d
	}
	return DefaultToolTimeout
}

// Validate checks the configuration as a whole. Errors wrap ErrInvalid and
// name the key to fix.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, backend.Errorf(backend.ErrInvalid, "config", c.Path, format, args...))
	}
	if c.Backend == "" {
		bad("backend is empty: choose podman, host or mock")
	} else if !plainName(c.Backend) {
		bad("backend %q is not a backend name (podman, host or mock)", c.Backend)
	}
	switch c.Fallback {
	case "":
	case "host":
		if c.Backend == "host" {
			bad(`fallback = "host" with backend = "host" falls back to itself: set fallback = ""`)
		}
	default:
		bad(`fallback must be "" or "host", got %q`, c.Fallback)
	}
	if c.SessionIdleTimeout < 0 {
		bad("session_idle_timeout must not be negative, got %s", c.SessionIdleTimeout)
	}
	if c.PolicyTimeout <= 0 {
		bad("policy_timeout must be positive, got %s", c.PolicyTimeout)
	}
	if err := c.Limits.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.SessionConcurrentCalls < 1 || c.SessionConcurrentCalls > maxSessionConcurrentCalls {
		bad("limits.session_concurrent_calls must be 1 to %d, got %d", maxSessionConcurrentCalls, c.SessionConcurrentCalls)
	}
	if c.PluginMemoryBudget < minPluginMemoryBudget {
		bad("limits.plugin_memory_budget must be at least %d (%d MiB: a few plugin instances), got %d", minPluginMemoryBudget, minPluginMemoryBudget>>20, c.PluginMemoryBudget)
	}
	for tool, d := range c.ToolTimeouts {
		if d <= 0 {
			bad("tool_timeouts.%s must be positive, got %s", tool, d)
		}
	}
	errs = append(errs, c.validateMCPExtras()...)
	// Whether disabled_tools names tools that exist is checked when the
	// kernel has loaded them (checkToolNames): only then are they known.
	for _, t := range c.DisabledTools {
		if t == "" {
			bad("disabled_tools has an empty name")
		}
	}
	for name := range c.Backends {
		if !plainName(name) {
			bad("[backends.%s]: %q is not a backend name", name, name)
		}
	}
	for i, p := range c.Plugins {
		where := fmt.Sprintf("plugins[%d]", i)
		if p.Name != "" {
			where += " (" + p.Name + ")"
		}
		if p.Path == "" {
			bad("%s: path is required: the .wasm file to load", where)
		}
		if p.SHA256 != "" && !validSHA256(p.SHA256) {
			bad("%s: sha256 must be 64 hex digits, got %q", where, p.SHA256)
		}
		for _, g := range p.Grants {
			if g == "" {
				bad("%s: grants has an empty entry", where)
			}
		}
		for tool, alias := range p.Aliases {
			if tool == "" || alias == "" {
				bad("%s: aliases need a tool and a new name, got %q = %q", where, tool, alias)
			}
		}
	}
	for i, p := range c.Policies {
		where := fmt.Sprintf("policies[%d]", i)
		switch {
		case p.Name == "" && p.Path == "":
			bad("%s: give a bundled policy name (%v) or a path to a policy plugin", where, BundledPolicies)
		case p.Path == "" && !isBundledPolicy(p.Name):
			bad("%s: %q is not a bundled policy (%v)%s: give a path to load it from a file", where, p.Name, BundledPolicies, didYouMean(p.Name, BundledPolicies))
		}
		if p.SHA256 != "" && !validSHA256(p.SHA256) {
			bad("%s: sha256 must be 64 hex digits, got %q", where, p.SHA256)
		}
	}
	for _, n := range c.DefaultPolicies {
		switch {
		case !isBundledPolicy(n):
			bad("default_policies: %q is not a bundled policy (%v)%s", n, BundledPolicies, didYouMean(n, BundledPolicies))
		case n == "allowlist":
			// Without its list it would deny every command.
			bad(`default_policies: the allowlist needs its commands: list it under [[policies]] with name = "allowlist" and config = { commands = [...] }`)
		}
	}
	for _, n := range c.BundledTools {
		if !slices.Contains(BundledToolPlugins, n) {
			bad("bundled_tools: %q is not a bundled tool plugin (%s)%s: load any other plugin from its file with a [[plugins]] entry",
				n, strings.Join(BundledToolPlugins, ", "), didYouMean(n, BundledToolPlugins))
		}
	}
	errs = append(errs, c.MCP.validate(c.Path)...)
	return errors.Join(errs...)
}

// ResolvedStateDir returns StateDir, or the default cache directory.
func (c Config) ResolvedStateDir() (string, error) {
	if c.StateDir != "" {
		return c.StateDir, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "wai"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", backend.Errorf(backend.ErrInvalid, "config", "", "no state_dir set and no home directory to default to: set state_dir")
	}
	return filepath.Join(home, ".cache", "wai"), nil
}

// PluginDirs returns the directories searched for bundled plugins, in
// order: PluginDir alone when set, else $WAI_PLUGIN_DIR, the plugins
// directory next to the executable, and ./build/plugins.
func (c Config) PluginDirs() []string {
	if c.PluginDir != "" {
		return []string{c.PluginDir}
	}
	var dirs []string
	if d := os.Getenv("WAI_PLUGIN_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Join(filepath.Dir(exe), "plugins"))
	}
	return append(dirs, filepath.Join("build", "plugins"))
}

func isBundledPolicy(name string) bool {
	for _, b := range BundledPolicies {
		if b == name {
			return true
		}
	}
	return false
}

func validSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32
}

// plainName: lower-case letters, digits, '_' and '-'.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
