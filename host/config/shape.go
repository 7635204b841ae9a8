package config

import (
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

// fileConfig is the TOML shape of File: snake_case keys, limits as their
// own table. Keeping it apart lets host.Config hold backend.Limits as is.
type fileConfig struct {
	Backend            string                     `toml:"backend"`
	Fallback           string                     `toml:"fallback"`
	StateDir           string                     `toml:"state_dir"`
	PluginDir          string                     `toml:"plugin_dir"`
	AuditLog           string                     `toml:"audit_log"`
	SessionIdleTimeout time.Duration              `toml:"session_idle_timeout"`
	ReadBeforeWrite    bool                       `toml:"read_before_write"`
	PolicyTimeout      time.Duration              `toml:"policy_timeout"`
	Limits             fileLimits                 `toml:"limits"`
	ToolTimeouts       map[string]time.Duration   `toml:"tool_timeouts"`
	SoftTimeouts       map[string]fileSoftTimeout `toml:"soft_timeouts"`
	DisabledTools      []string                   `toml:"disabled_tools"`
	Backends           map[string]map[string]any  `toml:"backends"`
	Plugins            []filePlugin               `toml:"plugins"`
	Policies           []filePolicy               `toml:"policies"`
	BundledTools       []string                   `toml:"bundled_tools"`
	DefaultPolicies    []string                   `toml:"default_policies"`
	MCP                fileMCP                    `toml:"mcp"`
	Dotfiles           fileDotfiles               `toml:"dotfiles"`
}

// fileDotfiles is [dotfiles] (host.DotfilesConfig).
type fileDotfiles struct {
	Repo   string `toml:"repo"`
	Branch string `toml:"branch"`
	Script string `toml:"script"`
	Target string `toml:"target"`
}

// fileLimits is [limits]: backend.Limits, then the kernel's own bounds.
type fileLimits struct {
	fileBackendLimits
	// Not backend limits: the kernel's bounds on plugin instances.
	SessionConcurrentCalls int           `toml:"session_concurrent_calls"`
	PluginMemoryBudget     int64         `toml:"plugin_memory_budget"`
	MaxJobs                int           `toml:"max_jobs"`
	JobMaxRuntime          time.Duration `toml:"job_max_runtime"`
}

// fileBackendLimits spells backend.Limits field for field, so the two
// convert into each other: a field added there and not here stops the
// build instead of being dropped from the file.
type fileBackendLimits struct {
	DefaultTimeout  time.Duration `toml:"default_timeout"`
	MinTimeout      time.Duration `toml:"min_timeout"`
	MaxTimeout      time.Duration `toml:"max_timeout"`
	MaxOutputBytes  int           `toml:"max_output_bytes"`
	MaxCommandBytes int           `toml:"max_command_bytes"`
	MaxStdinBytes   int           `toml:"max_stdin_bytes"`
	MaxScriptBytes  int           `toml:"max_script_bytes"`
	MaxEnvVars      int           `toml:"max_env_vars"`
	MaxWriteChars   int           `toml:"max_write_chars"`
	MaxResults      int           `toml:"max_results"`
	MaxReadBytes    int           `toml:"max_read_bytes"`
}

type fileSoftTimeout struct {
	After      time.Duration `toml:"after"`
	ExtendBy   time.Duration `toml:"extend_by"`
	HardCap    time.Duration `toml:"hard_cap"`
	Unattended string        `toml:"unattended"`
}

type filePlugin struct {
	Name    string            `toml:"name"`
	Path    string            `toml:"path"`
	SHA256  string            `toml:"sha256"`
	Grants  []string          `toml:"grants"`
	Config  map[string]any    `toml:"config"`
	Aliases map[string]string `toml:"aliases"`
}

type filePolicy struct {
	Name   string         `toml:"name"`
	Path   string         `toml:"path"`
	SHA256 string         `toml:"sha256"`
	Config map[string]any `toml:"config"`
}

type fileMCP struct {
	HTTPAddr    string         `toml:"http_addr"`
	TokenEnv    string         `toml:"token_env"`
	Tokens      []fileMCPToken `toml:"tokens"`
	MaxSessions int            `toml:"max_sessions"`
	ClientRoots []string       `toml:"client_roots"`
}

type fileMCPToken struct {
	Token     string `toml:"token"`
	TokenFile string `toml:"token_file"`
	User      string `toml:"user"`
}

// fromFile is f in its TOML shape: the defaults a file is decoded over.
func fromFile(f File) fileConfig {
	c := f.Config
	fc := fileConfig{
		Backend: c.Backend, Fallback: c.Fallback, StateDir: c.StateDir, PluginDir: f.PluginDir,
		AuditLog: c.AuditLog, SessionIdleTimeout: c.SessionIdleTimeout, ReadBeforeWrite: c.ReadBeforeWrite,
		PolicyTimeout: c.PolicyTimeout,
		Limits: fileLimits{
			fileBackendLimits:      fileBackendLimits(c.Limits),
			SessionConcurrentCalls: c.SessionConcurrentCalls, PluginMemoryBudget: c.PluginMemoryBudget,
			MaxJobs: c.MaxJobs, JobMaxRuntime: c.JobMaxRuntime,
		},
		ToolTimeouts:    map[string]time.Duration{},
		DisabledTools:   append([]string{}, c.DisabledTools...),
		Backends:        map[string]map[string]any{},
		BundledTools:    append([]string{}, c.BundledTools...),
		DefaultPolicies: append([]string{}, c.DefaultPolicies...),
		MCP:             fileMCP{HTTPAddr: f.MCP.HTTPAddr, TokenEnv: f.MCP.TokenEnv, MaxSessions: f.MCP.MaxSessions, ClientRoots: f.MCP.ClientRoots},
		Dotfiles:        fileDotfiles(c.Dotfiles),
	}
	for k, v := range c.ToolTimeouts {
		fc.ToolTimeouts[k] = v
	}
	for k, v := range c.SoftTimeouts {
		if fc.SoftTimeouts == nil {
			fc.SoftTimeouts = map[string]fileSoftTimeout{}
		}
		fc.SoftTimeouts[k] = fileSoftTimeout(v)
	}
	for k, v := range c.Backends {
		fc.Backends[k] = v
	}
	for _, p := range c.Plugins {
		fc.Plugins = append(fc.Plugins, filePlugin(p))
	}
	for _, t := range f.MCP.Tokens {
		fc.MCP.Tokens = append(fc.MCP.Tokens, fileMCPToken(t))
	}
	for _, p := range c.Policies {
		fc.Policies = append(fc.Policies, filePolicy(p))
	}
	return fc
}

// toFile is what a decoded file configures.
func (fc fileConfig) toFile() File {
	l := fc.Limits
	c := host.Config{
		Backend: fc.Backend, Fallback: fc.Fallback, StateDir: fc.StateDir,
		AuditLog: fc.AuditLog, SessionIdleTimeout: fc.SessionIdleTimeout, ReadBeforeWrite: fc.ReadBeforeWrite,
		PolicyTimeout:          fc.PolicyTimeout,
		Limits:                 backend.Limits(l.fileBackendLimits),
		SessionConcurrentCalls: l.SessionConcurrentCalls, PluginMemoryBudget: l.PluginMemoryBudget,
		MaxJobs: l.MaxJobs, JobMaxRuntime: l.JobMaxRuntime,
		ToolTimeouts:    fc.ToolTimeouts,
		DisabledTools:   nonNil(fc.DisabledTools),
		Backends:        fc.Backends,
		Plugins:         []host.PluginConfig{},
		Policies:        []host.PolicyConfig{},
		BundledTools:    nonNil(fc.BundledTools),
		DefaultPolicies: nonNil(fc.DefaultPolicies),
		Dotfiles:        host.DotfilesConfig(fc.Dotfiles),
	}
	for k, v := range fc.SoftTimeouts {
		if c.SoftTimeouts == nil {
			c.SoftTimeouts = map[string]host.SoftTimeout{}
		}
		c.SoftTimeouts[k] = host.SoftTimeout(v)
	}
	for _, p := range fc.Plugins {
		c.Plugins = append(c.Plugins, host.PluginConfig(p))
	}
	for _, p := range fc.Policies {
		c.Policies = append(c.Policies, host.PolicyConfig(p))
	}
	f := File{Config: c, PluginDir: fc.PluginDir,
		MCP: MCP{HTTPAddr: fc.MCP.HTTPAddr, TokenEnv: fc.MCP.TokenEnv, MaxSessions: fc.MCP.MaxSessions, ClientRoots: fc.MCP.ClientRoots}}
	for _, t := range fc.MCP.Tokens {
		f.MCP.Tokens = append(f.MCP.Tokens, MCPToken(t))
	}
	return f
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
