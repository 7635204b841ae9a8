package host

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Bounds of the plugin instance limits: a session running more calls at
// once than this is a runaway, and a budget below a few instances (one is
// ~5 MiB) would refuse the first calls.
const (
	maxSessionConcurrentCalls       = 1024
	maxJobs                         = 1024
	jobMaxRuntimeCap                = 24 * time.Hour
	minPluginMemoryBudget     int64 = 32 << 20
)

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
