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

// Bounds of the plugin instance limits: a session running more calls at
// once than this is a runaway, and a budget below a few instances (one is
// ~5 MiB) would refuse the first calls.
const (
	maxSessionConcurrentCalls       = 1024
	maxJobs                         = 1024
	jobMaxRuntimeCap                = 24 * time.Hour
	minPluginMemoryBudget     int64 = 32 << 20
)

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

// Validate checks the configuration as a whole. Errors wrap ErrInvalid and
// name the key to fix.
func (c Config) Validate() error {
	var errs []error
	for _, check := range configChecks {
		errs = append(errs, check(c)...)
	}
	return errors.Join(errs...)
}

// configChecks are Validate's checks, one per key or group of keys that
// are judged together, in the order their errors are reported. Each
// returns what is wrong, nothing when all is well.
var configChecks = []func(Config) []error{
	checkBackend,
	checkDurations,
	func(c Config) []error { return []error{c.Limits.Validate()} },
	checkPluginLimits,
	checkJobLimits,
	checkSoftTimeouts,
	checkTools,
	checkBackendTables,
	checkPlugins,
	checkPolicies,
	checkDefaultPolicies,
	checkBundledTools,
	checkDotfiles,
}

// invalid is one configuration error, naming the file when there is one.
func (c Config) invalid(format string, args ...any) error {
	return backend.Errorf(backend.ErrInvalid, "config", c.Source, format, args...)
}

func checkBackend(c Config) (errs []error) {
	if c.Backend == "" {
		errs = append(errs, c.invalid("backend is empty: choose podman, host or mock"))
	} else if !plainName(c.Backend) {
		errs = append(errs, c.invalid("backend %q is not a backend name (podman, host or mock)", c.Backend))
	}
	switch c.Fallback {
	case "":
	case "host":
		if c.Backend == "host" {
			errs = append(errs, c.invalid(`fallback = "host" with backend = "host" falls back to itself: set fallback = ""`))
		}
	default:
		errs = append(errs, c.invalid(`fallback must be "" or "host", got %q`, c.Fallback))
	}
	return errs
}

func checkDurations(c Config) (errs []error) {
	if c.SessionIdleTimeout < 0 {
		errs = append(errs, c.invalid("session_idle_timeout must not be negative, got %s", c.SessionIdleTimeout))
	}
	if c.PolicyTimeout <= 0 {
		errs = append(errs, c.invalid("policy_timeout must be positive, got %s", c.PolicyTimeout))
	}
	return errs
}

func checkJobLimits(c Config) (errs []error) {
	if c.MaxJobs < 1 || c.MaxJobs > maxJobs {
		errs = append(errs, c.invalid("limits.max_jobs must be 1 to %d, got %d", maxJobs, c.MaxJobs))
	}
	if c.JobMaxRuntime <= 0 || c.JobMaxRuntime > jobMaxRuntimeCap {
		errs = append(errs, c.invalid("limits.job_max_runtime must be above 0 and at most %s, got %s", jobMaxRuntimeCap, c.JobMaxRuntime))
	}
	return errs
}

func checkPluginLimits(c Config) (errs []error) {
	if c.SessionConcurrentCalls < 1 || c.SessionConcurrentCalls > maxSessionConcurrentCalls {
		errs = append(errs, c.invalid("limits.session_concurrent_calls must be 1 to %d, got %d", maxSessionConcurrentCalls, c.SessionConcurrentCalls))
	}
	if c.PluginMemoryBudget < minPluginMemoryBudget {
		errs = append(errs, c.invalid("limits.plugin_memory_budget must be at least %d (%d MiB: a few plugin instances), got %d",
			minPluginMemoryBudget, minPluginMemoryBudget>>20, c.PluginMemoryBudget))
	}
	return errs
}

// checkTools checks tool_timeouts and disabled_tools. Whether
// disabled_tools names tools that exist is checked when the kernel has
// loaded them (checkDisabledTools): only then are they known.
func checkTools(c Config) (errs []error) {
	for tool, d := range c.ToolTimeouts {
		if d <= 0 {
			errs = append(errs, c.invalid("tool_timeouts.%s must be positive, got %s", tool, d))
		}
	}
	for _, t := range c.DisabledTools {
		if t == "" {
			errs = append(errs, c.invalid("disabled_tools has an empty name"))
		}
	}
	return errs
}

func checkBackendTables(c Config) (errs []error) {
	for name := range c.Backends {
		if !plainName(name) {
			errs = append(errs, c.invalid("[backends.%s]: %q is not a backend name", name, name))
		}
	}
	return errs
}

func checkPlugins(c Config) (errs []error) {
	for i, p := range c.Plugins {
		where := fmt.Sprintf("plugins[%d]", i)
		if p.Name != "" {
			where += " (" + p.Name + ")"
		}
		if p.Path == "" {
			errs = append(errs, c.invalid("%s: path is required: the .wasm file to load", where))
		}
		if p.SHA256 != "" && !validSHA256(p.SHA256) {
			errs = append(errs, c.invalid("%s: sha256 must be 64 hex digits, got %q", where, p.SHA256))
		}
		for _, g := range p.Grants {
			if g == "" {
				errs = append(errs, c.invalid("%s: grants has an empty entry", where))
			}
		}
		for tool, alias := range p.Aliases {
			if tool == "" || alias == "" {
				errs = append(errs, c.invalid("%s: aliases need a tool and a new name, got %q = %q", where, tool, alias))
			}
		}
	}
	return errs
}

func checkPolicies(c Config) (errs []error) {
	bundled := BundledPolicies()
	for i, p := range c.Policies {
		where := fmt.Sprintf("policies[%d]", i)
		switch {
		case p.Name == "" && p.Path == "":
			errs = append(errs, c.invalid("%s: give a bundled policy name (%v) or a path to a policy plugin", where, bundled))
		case p.Path == "" && !slices.Contains(bundled, p.Name):
			errs = append(errs, c.invalid("%s: %q is not a bundled policy (%v)%s: give a path to load it from a file",
				where, p.Name, bundled, didYouMean(p.Name, bundled)))
		}
		if p.SHA256 != "" && !validSHA256(p.SHA256) {
			errs = append(errs, c.invalid("%s: sha256 must be 64 hex digits, got %q", where, p.SHA256))
		}
	}
	return errs
}

func checkDefaultPolicies(c Config) (errs []error) {
	bundled := BundledPolicies()
	for _, n := range c.DefaultPolicies {
		switch {
		case !slices.Contains(bundled, n):
			errs = append(errs, c.invalid("default_policies: %q is not a bundled policy (%v)%s", n, bundled, didYouMean(n, bundled)))
		case n == "allowlist":
			// Without its list it would deny every command.
			errs = append(errs, c.invalid(`default_policies: the allowlist needs its commands: list it under [[policies]] with name = "allowlist" and config = { commands = [...] }`))
		}
	}
	return errs
}

func checkBundledTools(c Config) (errs []error) {
	bundled := BundledToolPlugins()
	for _, n := range c.BundledTools {
		if !slices.Contains(bundled, n) {
			errs = append(errs, c.invalid("bundled_tools: %q is not a bundled tool plugin (%s)%s: load any other plugin from its file with a [[plugins]] entry",
				n, strings.Join(bundled, ", "), didYouMean(n, bundled)))
		}
	}
	return errs
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
