package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

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

// Load reads a configuration file over Default and validates it. With path "", it reads ./wai.toml, else
// $XDG_CONFIG_HOME/wai/config.toml (~/.config when unset), else returns the
// defaults. A path that is given must exist. It is LoadIn with the
// process's environment and working directory.
//
// Unknown keys are errors naming the key and its line: a misspelt limit
// silently left at its default is exactly the mistake a sandbox config must
// not allow.
func Load(path string) (File, error) { return LoadIn(path, Env{}) }

// LoadIn is Load with the variables and working directory of env: the
// file is looked for, and a relative path taken, from env.Dir, and the
// File keeps env for what it resolves later (PluginDirs, the default
// state directory).
func LoadIn(path string, env Env) (File, error) {
	if path == "" {
		for _, p := range env.configPaths() {
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			f := Default()
			f.env = env
			return f, f.Validate()
		}
	} else {
		path = env.path(path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return File{}, backend.Errorf(backend.ErrNotFound, "config", path, "no such file: check --config, or remove it to use ./wai.toml or the defaults")
		}
		return File{}, backend.Errorf(backend.ErrInvalid, "config", path, "cannot read: %v", err)
	}
	f, err := Parse(data)
	if err != nil {
		return File{}, relabel(err, path)
	}
	f.Path = path
	f.env = env
	return f, nil
}

// relabel puts the file name into a config error that was built without it.
func relabel(err error, path string) error {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		if _, isBackendErr := err.(*backend.Error); !isBackendErr {
			var out []error
			for _, e := range joined.Unwrap() {
				out = append(out, relabel(e, path))
			}
			return errors.Join(out...)
		}
	}
	var be *backend.Error
	if errors.As(err, &be) && be.Path == "" {
		cp := *be
		cp.Path = path
		return &cp
	}
	return err
}

// Parse decodes TOML over Default and validates the result.
func Parse(data []byte) (File, error) {
	def := Default()
	fc := fromFile(def)
	md, err := toml.NewDecoder(strings.NewReader(string(data))).Decode(&fc)
	if err != nil {
		return File{}, backend.Errorf(backend.ErrInvalid, "config", "", "%v%s", err, tomlAdvice(err))
	}
	var errs []error
	for _, k := range topUndecoded(backendKeysDecoded(md.Undecoded())) {
		errs = append(errs, backend.Errorf(backend.ErrInvalid, "config", "",
			"unknown key %q%s: %s", k.String(), atLine(data, md, k), unknownKeyAdvice(k)))
	}
	for _, k := range md.Keys() {
		if isDurationKey(k) && md.Type(k...) != "String" {
			errs = append(errs, backend.Errorf(backend.ErrInvalid, "config", "",
				"%s%s must be a duration string such as \"30s\" or \"15m\", %s", k.String(), atLine(data, md, k), durationTypeAdvice(data, md, k)))
		}
	}
	if len(errs) > 0 {
		return File{}, errors.Join(errs...)
	}
	f := fc.toFile()
	f.backendLines = backendKeyLines(data, md)
	return f, f.Validate()
}

// backendKeysDecoded drops the keys inside a [backends.NAME] table from the
// undecoded ones. The decoder reports every key below a table decoded into
// a free-form map (env = { FOO = "bar" }, [[backends.podman.host_mounts]])
// as undecoded, though the map holds it: the table goes to its backend
// whole, and the backend's own parser rejects the keys it does not know.
func backendKeysDecoded(keys []toml.Key) []toml.Key {
	var out []toml.Key
	for _, k := range keys {
		if len(k) >= 3 && k[0] == "backends" {
			continue
		}
		out = append(out, k)
	}
	return out
}

// backendKeyLines maps each key inside a [backends.NAME] table, below the
// table ("backends.host.env.FOO"), to the line that sets it, so that a key
// the backend refuses can be shown where it is. A key whose line cannot be
// found is left out.
func backendKeyLines(data []byte, md toml.MetaData) map[string]int {
	var lines map[string]int
	for _, k := range md.Keys() {
		if len(k) < 3 || k[0] != "backends" {
			continue
		}
		if n := keyLine(data, md, k); n > 0 {
			if lines == nil {
				lines = map[string]int{}
			}
			lines[k.String()] = n
		}
	}
	return lines
}

// backendKeyLine returns the line of the first key of table
// [backends.NAME] whose last element is field ("" when none is known): a
// backend's parser names only the field it refused, not where it is.
func (f File) backendKeyLine(name, field string) int {
	prefix := "backends." + name + "."
	best := 0
	for k, n := range f.backendLines {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		parts := strings.Split(k, ".")
		if parts[len(parts)-1] == field && (best == 0 || n < best) {
			best = n
		}
	}
	return best
}

// topUndecoded drops keys below an unknown table: reporting [foo] once is
// clearer than reporting every key in it.
func topUndecoded(keys []toml.Key) []toml.Key {
	var out []toml.Key
	for _, k := range keys {
		covered := false
		for _, p := range out {
			if len(p) < len(k) && reflect.DeepEqual([]string(p), []string(k[:len(p)])) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, k)
		}
	}
	return out
}

func isDurationKey(k toml.Key) bool {
	switch {
	case len(k) == 1:
		return k[0] == "session_idle_timeout" || k[0] == "policy_timeout"
	case len(k) == 2 && k[0] == "limits":
		return strings.HasSuffix(k[1], "_timeout")
	case len(k) == 2 && k[0] == "tool_timeouts":
		return true
	case len(k) == 3 && k[0] == "soft_timeouts":
		return k[2] != "unattended"
	}
	return false
}

// errProbe is decoded at the key whose line we want: the decoder reports an
// Unmarshaler's error as a ParseError carrying the position it recorded for
// that key. The toml module keeps key positions private; this is the one
// public door to them.
type errProbe struct{}

var errProbeHit = errors.New("wai: config key probe")

func (errProbe) UnmarshalTOML(any) error { return errProbeHit }

// atLine returns " at line N" for key, or "" when the line cannot be found.
func atLine(data []byte, md toml.MetaData, key toml.Key) string {
	if n := keyLine(data, md, key); n > 0 {
		return fmt.Sprintf(" at line %d", n)
	}
	return ""
}

// keyLine decodes data once more into a type built to hold only key, with
// an errProbe at its end.
func keyLine(data []byte, md toml.MetaData, key toml.Key) int {
	if len(key) == 0 {
		return 0
	}
	t := reflect.TypeOf(errProbe{})
	for i := len(key) - 1; i >= 0; i-- {
		if i < len(key)-1 {
			switch md.Type(key[:i+1]...) {
			case "ArrayHash", "Array":
				t = reflect.SliceOf(t)
			}
		}
		t = reflect.StructOf([]reflect.StructField{{
			Name: "F",
			Type: t,
			Tag:  reflect.StructTag("toml:" + strconv.Quote(key[i])),
		}})
	}
	v := reflect.New(t)
	_, err := toml.NewDecoder(strings.NewReader(string(data))).Decode(v.Interface())
	var pe toml.ParseError
	// ParseError does not unwrap, so the probe is recognised by its text.
	if errors.As(err, &pe) && pe.Message == errProbeHit.Error() {
		return pe.Position.Line
	}
	return 0
}

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
