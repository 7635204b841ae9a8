//go:build linux && (amd64 || arm64)

package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Config is the backend's table in the wai config file.
type Config struct {
	// Root is the directory commands run in. "{user}" and "{session}" are
	// replaced by the workspace's user and session names. A root with
	// "{session}" belongs to one session and is removed when it closes
	// (unless kept); any other root is shared and never removed. Default:
	// <state dir>/host/{session}.
	Root string `json:"root"`
	// Shell runs shell-string requests as `Shell -c STRING`. Default
	// /bin/sh.
	Shell string `json:"shell"`
	// InheritEnv starts commands from this process's environment instead
	// of a minimal PATH, HOME (the root), LANG and TMPDIR.
	InheritEnv bool `json:"inherit_env"`
	// Env adds (or overrides) variables of the base environment.
	Env map[string]string `json:"env"`
	// KillGrace is how long a stopping command gets: between SIGTERM and
	// SIGKILL, and for its output to drain once it is dead. Default 500ms.
	// A string ("750ms") or a number of seconds.
	KillGrace Duration `json:"kill_grace"`
	// KeepFor is how long wai gc leaves a kept session that no process
	// holds unused before removing it. 0 (the default) keeps it until
	// wai rm or wai gc --all removes it.
	KeepFor Duration `json:"keep_for"`
}

// Duration is backend.Duration: a duration string or a number of seconds.
type Duration = backend.Duration

const (
	defaultShell     = "/bin/sh"
	defaultKillGrace = 500 * time.Millisecond
	maxKillGrace     = time.Minute
	// defaultPath is the PATH of commands that do not inherit the host's
	// environment: Debian's default for a login shell of root, which also
	// covers every ordinary user's.
	defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

var placeholder = regexp.MustCompile(`\{[^{}]*\}`)

// parseConfig decodes and checks the raw config, filling in defaults.
func parseConfig(opts backend.Options) (Config, error) {
	var c Config
	if err := backend.DecodeConfig("host", opts.Config, &c); err != nil {
		return c, err
	}
	bad := func(format string, args ...any) error {
		return backend.Errorf(backend.ErrInvalid, "config", "", "backend host: "+format, args...)
	}
	if c.Root == "" {
		state, err := stateDir(opts)
		if err != nil {
			return c, err
		}
		c.Root = filepath.Join(state, "host", "{session}")
	}
	for _, p := range placeholder.FindAllString(c.Root, -1) {
		if p != "{user}" && p != "{session}" {
			return c, bad("root %q: unknown placeholder %s (only {user} and {session} exist)", c.Root, p)
		}
	}
	abs, err := filepath.Abs(c.Root)
	if err != nil {
		return c, bad("root %q: %v", c.Root, err)
	}
	c.Root = abs
	if c.Shell == "" {
		c.Shell = defaultShell
	}
	if !filepath.IsAbs(c.Shell) {
		return c, bad("shell %q must be an absolute path", c.Shell)
	}
	if fi, err := os.Stat(c.Shell); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return c, bad("shell %q is not an executable file", c.Shell)
	}
	switch {
	case c.KillGrace == 0:
		c.KillGrace = Duration(defaultKillGrace)
	case c.KillGrace < 0 || time.Duration(c.KillGrace) > maxKillGrace:
		return c, bad("kill_grace %s must lie within 0–%s", time.Duration(c.KillGrace), maxKillGrace)
	}
	if c.KeepFor < 0 {
		return c, bad("keep_for %s must not be negative (0 keeps kept sessions until removed)", time.Duration(c.KeepFor))
	}
	if err := opts.Limits.CheckEnv("config", c.Env); err != nil {
		return c, bad("env: %v", err)
	}
	return c, nil
}

// stateDir is where the backend keeps workspaces and session records.
func stateDir(opts backend.Options) (string, error) {
	if opts.StateDir != "" {
		return opts.StateDir, nil
	}
	// An embedder that names no state directory still gets one that
	// survives reboots and is the user's own.
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", backend.Errorf(backend.ErrInvalid, "config", "", "backend host: no state directory configured, and no user cache directory: %v", err)
	}
	return filepath.Join(cache, "wai"), nil
}

// rootFor expands the root template for a workspace.
func (c Config) rootFor(spec backend.WorkspaceSpec) (string, error) {
	if strings.Contains(c.Root, "{user}") && spec.User == "" {
		return "", backend.Errorf(backend.ErrInvalid, "open", spec.Session,
			"the host root %q is per user: open the workspace with a user name", c.Root)
	}
	if spec.User != "" && !strings.Contains(c.Root, "{user}") && !c.perSession() {
		// Users are kept apart: one directory for every session would
		// show each user the others' files.
		return "", backend.Errorf(backend.ErrInvalid, "open", spec.Session,
			"the host root %q is one directory every session shares, so users would see each other's files: put {user} (or {session}) in root to open sessions of user %q", c.Root, spec.User)
	}
	return strings.NewReplacer("{user}", spec.User, "{session}", spec.Session).Replace(c.Root), nil
}

// perSession reports whether each session gets a root of its own, which
// is then the session's to remove.
func (c Config) perSession() bool { return strings.Contains(c.Root, "{session}") }

// Interface guards
var (
	_ json.Unmarshaler = (*Duration)(nil)
	_ json.Marshaler   = Duration(0)
)
