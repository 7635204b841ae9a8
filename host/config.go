package host

import (
	"os"
	"path/filepath"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Config is what the kernel reads: the backend, limits, policies and
// plugins it runs with. A program builds it in code, from DefaultConfig;
// package host/config maps wai.toml onto it for the CLI.
//
// StateDir left empty is resolved when a Kernel is built, so a Config
// stays a plain description.
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
	// PluginDirs are searched in order for a bundled plugin (NAME.wasm)
	// before the plugins built into the program (WithBundledPlugins);
	// FallbackPluginDirs after them. With neither, only the built-in
	// plugins are found.
	PluginDirs         []string
	FallbackPluginDirs []string
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
	// MaxJobs caps the background jobs one session runs at once ([limits]
	// max_jobs); one more is refused until one ends or is cancelled.
	MaxJobs int
	// JobMaxRuntime is the longest a background job may run ([limits]
	// job_max_runtime, at most 24 h): its default and its cap.
	JobMaxRuntime time.Duration
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
	// Dotfiles are applied to every managed container a create makes
	// ([dotfiles]; docs/containers.md "Dotfiles").
	Dotfiles DotfilesConfig
	// SecretEnv names environment variables holding wai's own secrets
	// (host/config adds [mcp] token_env, wai serve its --token-env): no
	// managed container is given them, whatever its env_passthrough.
	// Variables starting with WAI_ are never given either way.
	SecretEnv []string

	// Source names where the configuration came from (a file), for
	// errors; empty for a Config built in Go.
	Source string
	// BackendKeyLine, when set, returns the line of Source that sets the
	// key field of the named backend's table (0 when unknown), so that a
	// key the backend refuses is shown where it is. host/config sets it.
	BackendKeyLine func(backend, field string) int
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

// BundledPolicies returns the names of the policies built into the
// kernel: they need no path.
func BundledPolicies() []string { return []string{"blocklist", "allowlist", "container_safety"} }

// BundledToolPlugins returns the tool plugins BundledTools may name; any
// other tool plugin is loaded from its path with [[plugins]].
func BundledToolPlugins() []string {
	return []string{"shell", "vfs", "python", "podman_shell", "jobs", "containers"}
}

// containersToolTimeout bounds a containers call: its exec timeout
// defaults to 300 s.
const containersToolTimeout = 330 * time.Second

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
		MaxJobs:                4,
		JobMaxRuntime:          time.Hour,
		PluginMemoryBudget:     2 << 30,
		ToolTimeouts: map[string]time.Duration{
			"default":       DefaultToolTimeout,
			"shell_execute": commandToolTimeout,
			"podman_shell":  commandToolTimeout,
			// A create pulls nothing but may run setup commands, and an
			// exec defaults to 300 s: the deadline leaves room for both.
			"containers": containersToolTimeout,
		},
		DisabledTools:   []string{},
		Backends:        map[string]map[string]any{},
		Plugins:         []PluginConfig{},
		Policies:        []PolicyConfig{},
		BundledTools:    []string{"shell", "vfs", "python", "podman_shell", "jobs"},
		DefaultPolicies: []string{"blocklist", "container_safety"},
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
