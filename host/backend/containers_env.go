package backend

import (
	"maps"
	"path"
	"slices"
	"strings"
)

// Env passthrough modes of a container create.
const (
	EnvPassAuto = "auto" // host variables matching the configured patterns
	EnvPassAll  = "all"  // every host variable but NeverPassthrough
	EnvPassNone = "none" // only the explicit env
)

// Auto passthrough has no default patterns: a host's API keys and tokens
// are credentials, and a container gets one only when the operator lists
// it ([backends.podman.containers] env_patterns) or a person approves a
// create that names it (the container_safety policy's gates).

// NeverPassthrough are host variables that describe the host session, not
// the work: passing them would break the container (PATH, HOME) or leak
// the host's agent and display sockets. No mode passes them, though an
// explicit env may set them.
var NeverPassthrough = map[string]bool{
	"PATH": true, "HOME": true, "SHELL": true, "USER": true, "LOGNAME": true, "PWD": true, "OLDPWD": true,
	"TERM": true, "DISPLAY": true, "DBUS_SESSION_BUS_ADDRESS": true, "XDG_RUNTIME_DIR": true,
	"SSH_AUTH_SOCK": true, "SSH_CONNECTION": true, "SSH_CLIENT": true, "SSH_TTY": true,
	"LS_COLORS": true, "LANG": true, "LC_ALL": true,
}

// WaiOwnPrefix starts the names of wai's own variables (WAI_MCP_TOKEN,
// the bearer token of wai serve, among them): they configure or
// authenticate wai, never the work, and no mode passes them, an explicit
// list included. A token_env naming another variable is kept out by the
// kernel (host.Config.SecretEnv).
const WaiOwnPrefix = "WAI_"

// EnvPassthrough is a create's env_passthrough: a mode, or (Mode empty) an
// explicit list of variable names.
type EnvPassthrough struct {
	Mode  string
	Names []string
}

// ValidEnvPatterns checks fnmatch-style patterns (*, ?, [set]).
func ValidEnvPatterns(patterns []string) error {
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return Errorf(ErrInvalid, "containers.create", "", "env pattern %q is not a valid glob (use *, ? and [set])", p)
		}
	}
	return nil
}

// PassthroughEnv picks the host variables a container gets under mode p
// (patterns are auto's: none, nothing passes) and lays explicit over
// them: explicit always wins. It returns the variables and their sorted
// names; only the names may be shown or stored.
func PassthroughEnv(host map[string]string, p EnvPassthrough, patterns []string, explicit map[string]string) (map[string]string, []string, error) {
	if err := ValidEnvPatterns(patterns); err != nil {
		return nil, nil, err
	}
	out := map[string]string{}
	switch {
	case p.Mode == "" && p.Names != nil:
		for _, n := range p.Names {
			if v, ok := host[n]; ok && !strings.HasPrefix(n, WaiOwnPrefix) {
				out[n] = v
			}
		}
	case p.Mode == EnvPassAuto || p.Mode == "":
		for k, v := range host {
			if !never(k) && matchAny(patterns, k) {
				out[k] = v
			}
		}
	case p.Mode == EnvPassAll:
		for k, v := range host {
			if !never(k) {
				out[k] = v
			}
		}
	case p.Mode == EnvPassNone:
	default:
		return nil, nil, Errorf(ErrInvalid, "containers.create", "", "env_passthrough %q is not auto, all, none or a list of variable names", p.Mode)
	}
	for k, v := range explicit {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, nil, Errorf(ErrInvalid, "containers.create", "", "env name %q is not a variable name", k)
		}
		out[k] = v
	}
	names := slices.Sorted(maps.Keys(out))
	return out, names, nil
}

func never(name string) bool {
	return NeverPassthrough[name] || strings.HasPrefix(name, WaiOwnPrefix)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// EnvMap turns KEY=VALUE lines (os.Environ) into a map.
func EnvMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}
