package podman

import (
	"encoding/json"
	"math"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Config is the backend's table in the wai config file ([backends.podman]),
// decoded strictly from JSON with snake_case keys. ParseConfig fills every
// key left out with its default.
type Config struct {
	// URL of the Podman service: unix:///path, ssh://user@host[:port]/path
	// or tcp://host:port. Default: $CONTAINER_HOST, else
	// unix:///run/podman/podman.sock as root, else
	// unix://$XDG_RUNTIME_DIR/podman/podman.sock.
	URL string `json:"url"`
	// Identity is the SSH private key file for an ssh:// URL (default
	// $CONTAINER_SSHKEY, else the SSH agent).
	Identity string `json:"identity"`
	// Image every session container runs. When it is not configured, the
	// image scripts/setup-podman.sh builds (localhost/wai-python:bookworm:
	// Python with pytest, git and the usual tools) if present, else
	// docker.io/library/python:3.12-bookworm.
	Image string `json:"image"`
	// NamePrefix names containers <name_prefix>-<session>. Default
	// "wai-shell".
	NamePrefix string `json:"name_prefix"`
	// Runtime is the OCI runtime ("runc", "crun"); "" uses the service's
	// default. crun cannot run on cgroup v1 or hybrid hosts: use runc there.
	// Podman 4.3 services ignore a container's runtime; a container that
	// runs on another one than this is removed and the open fails, so the
	// setting is never silently not applied.
	Runtime string `json:"runtime"`
	// User the container and every command run as, "UID:GID". Default
	// "65534:65534" (nobody).
	User string `json:"user"`
	// Network is "none" (the default: only a loopback interface) or a
	// Podman network mode that gives the container a network of its own
	// ("bridge", "private", "slirp4netns", "pasta"). "host" is refused.
	Network string `json:"network"`
	// Memory limit, swap included (no swap is granted beyond it): a byte
	// count or a size like "512m", "1g". Default "1g".
	Memory string `json:"memory"`
	// CPUs the container may use, fractions allowed. Default 1.
	CPUs float64 `json:"cpus"`
	// PidsLimit caps the processes and threads of the container. Default
	// 256.
	PidsLimit int64 `json:"pids_limit"`
	// Nofile is the open-files rlimit of commands. It must not exceed the
	// service's hard limit (`ulimit -Hn`). Default 1024.
	Nofile uint64 `json:"nofile"`
	// Nproc is the processes rlimit. It counts every process of the
	// container user on the whole host, across sessions, so it is set high
	// and PidsLimit does the per-container capping. 0 (the default) means
	// min(hard nproc limit, kernel.pid_max) of this host; a value above
	// the hard limit (`ulimit -Hu`) is refused.
	Nproc uint64 `json:"nproc"`
	// TmpfsSize bounds the tmpfs at /tmp (it counts against Memory too).
	// Default "64m".
	TmpfsSize string `json:"tmpfs_size"`
	// IdleTimeout removes a session's container after this long without
	// a command (the workspace files stay; the next command starts a new
	// container). "0s" never. Default "15m".
	IdleTimeout Duration `json:"idle_timeout"`
	// MaxUptime force-removes a container this long after it started,
	// busy or not (the contract's timeout). "0s" (the default) never.
	MaxUptime Duration `json:"max_uptime"`
	// KillGrace is how long a command that outlived its timeout gets
	// between SIGTERM and SIGKILL. Default "1s".
	KillGrace Duration `json:"kill_grace"`
	// KeepBackground leaves running what a command that exited by itself
	// started in the background (a server for the next command, say).
	// Off by default: what a command starts ends with it, as on the host
	// backend, so nothing runs on unseen between calls.
	KeepBackground bool `json:"keep_background"`
	// Agent runs commands through wai-agent, a small static helper
	// bind-mounted read-only into every container and started once per
	// container (docs/AGENT.md): a command then costs about a millisecond
	// instead of a Podman exec each, and its output streams as it comes.
	// When the agent cannot be started, commands fall back to one Podman
	// exec each. Default true; false uses the Podman exec path only
	// (for debugging, or to compare).
	Agent bool `json:"agent"`
	// AgentPath is a wai-agent binary on this host to use instead of the
	// one bin/wai carries (a build of cmd/wai-agent for the containers'
	// architecture: `CGO_ENABLED=0 go build ./cmd/wai-agent`).
	AgentPath string `json:"agent_path"`
	// Env is added to the image's environment for every command.
	Env map[string]string `json:"env"`
	// PullBackoff is the wait after a failed image pull before the next
	// attempt; it doubles after each failure up to PullBackoffMax.
	// Defaults "1s" and "5m".
	PullBackoff    Duration `json:"pull_backoff"`
	PullBackoffMax Duration `json:"pull_backoff_max"`
	// HostMounts are host paths copied into a new workspace before its
	// first command (docs/ARCHITECTURE.md), only from under AllowedHostRoots.
	HostMounts       []HostMount `json:"host_mounts"`
	AllowedHostRoots []string    `json:"allowed_host_roots"`
	// WorkspaceDir holds one directory per session, bind-mounted at
	// /workspace. Default <state_dir>/podman. "{user}" and "{session}",
	// each a whole path element, are replaced by the workspace's user and
	// session names: "/srv/wai/{user}" gives every user a directory of
	// their own (a session of no user is then refused), and a session's
	// directory is <expanded>/<session> unless "{session}" ends the path.
	// Without "{user}", a user's sessions go under <expanded>/@users/<user>,
	// so users' sessions never share files.
	// With an ssh:// URL the same path must reach the same files on the
	// service's host.
	WorkspaceDir string `json:"workspace_dir"`
	// WorkspaceSize caps what a session may store in /workspace: each
	// session's workspace is an ext4 file system in a sparse image file of
	// this size, loop-mounted by wai (needs root and mkfs.ext4). A write
	// past it fails with "No space left on device". Default "1g"; "0"
	// turns the limit off, explicitly.
	WorkspaceSize string `json:"workspace_size"`
	// Workspace is where a session's /workspace lives: "bind" (a directory
	// under workspace_dir on wai's machine, bind-mounted) or "volume" (a
	// Podman named volume on the service's machine, its files served by
	// wai-agent in the container). Default: bind for a unix:// service,
	// volume for ssh:// and tcp:// (see config_workspace.go).
	Workspace string `json:"workspace"`
	// Containers configures the containers agents manage beyond their
	// session's ([backends.podman.containers]; see ContainersConfig).
	Containers ContainersConfig `json:"containers"`

	// Parsed forms, filled by ParseConfig.
	memoryBytes    int64
	tmpfsBytes     int64
	workspaceBytes int64 // 0: no limit
	imageDefault   bool  // Image was not configured
}

// HostMount copies HostPath (a file or directory under one of
// AllowedHostRoots) to MountPath, relative to the workspace root.
type HostMount struct {
	HostPath  string `json:"host_path"`
	MountPath string `json:"mount_path"`
	// Include and Exclude are path.Match globs matched against each
	// file's path relative to HostPath and against its base name; "**"
	// matches any number of directories. A file is copied when it matches
	// an Include (or Include is empty) and no Exclude.
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
	// MaxBytes is the byte budget of this mount: the copy stops with an
	// error once the files would exceed it. Default 64 MiB.
	MaxBytes int64 `json:"max_bytes"`
}

// Duration is backend.Duration: a duration string or a number of seconds.
type Duration = backend.Duration

// Defaults.
const (
	DefaultImage = "docker.io/library/python:3.12-bookworm"
	// LocalImage is what scripts/setup-podman.sh builds without a
	// registry. When no image is configured, the backend uses LocalImage
	// if it is present, else DefaultImage (pulled if missing).
	LocalImage        = "localhost/wai-python:bookworm"
	DefaultNamePrefix = "wai-shell"
	DefaultUser       = "65534:65534"
	defaultMemory     = "1g"
	defaultTmpfs      = "64m"
	defaultWorkspace  = "1g"
	// minWorkspaceBytes is the smallest workspace_size: below it the
	// file system's own metadata would eat most of the space.
	minWorkspaceBytes = 8 << 20
	defaultPids       = 256
	defaultNofile     = 1024
	defaultMountBytes = 64 << 20
	// ContainerWorkspace is where the workspace is mounted in the container.
	ContainerWorkspace = "/workspace"
)

// DefaultConfig returns the defaults ParseConfig applies, before the
// service URL and workspace directory are resolved.
func DefaultConfig() Config {
	return Config{
		Image:          DefaultImage,
		NamePrefix:     DefaultNamePrefix,
		User:           DefaultUser,
		Network:        "none",
		Memory:         defaultMemory,
		CPUs:           1,
		PidsLimit:      defaultPids,
		Nofile:         defaultNofile,
		TmpfsSize:      defaultTmpfs,
		WorkspaceSize:  defaultWorkspace,
		IdleTimeout:    Duration(15 * time.Minute),
		KillGrace:      Duration(time.Second),
		Agent:          true,
		PullBackoff:    Duration(time.Second),
		PullBackoffMax: Duration(5 * time.Minute),
	}
}

// ParseConfig decodes the backend's raw config over the defaults, rejects
// unknown keys and bad values (backend.ErrInvalid), and resolves the service
// URL and the workspace directory (under stateDir unless set).
func ParseConfig(raw json.RawMessage, stateDir string) (Config, error) {
	c := DefaultConfig()
	c.Image = ""
	if err := backend.DecodeConfig("podman", raw, &c); err != nil {
		return Config{}, err
	}
	if c.Image == "" {
		c.Image, c.imageDefault = DefaultImage, true
	}
	if err := c.resolve(stateDir); err != nil {
		return Config{}, err
	}
	return c, nil
}

func (c *Config) resolve(stateDir string) error {
	for _, step := range []func() error{
		c.resolveService,
		c.resolveResources,
		c.resolveTimers,
		c.checkEnv,
		c.checkMounts,
		c.Containers.resolve,
		func() error { return c.resolveWorkspace(stateDir) },
		c.resolveWorkspaceMode,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// invalid is a configuration error of the backend's table.
func invalid(format string, args ...any) error {
	return backend.Errorf(backend.ErrInvalid, "config", "", "backend podman: "+format, args...)
}

// resolveService checks where the service is and what it runs: url,
// image, name_prefix, user and network.
func (c *Config) resolveService() error {
	if c.URL == "" {
		c.URL = DefaultURL()
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return invalid("url %q is not a URL: %v", c.URL, err)
	}
	switch u.Scheme {
	case "unix", "ssh", "tcp":
	default:
		return invalid("url %q: the scheme must be unix://, ssh:// or tcp://", c.URL)
	}
	if c.Image == "" || strings.ContainsAny(c.Image, " \t\n") {
		return invalid("image %q: name an image, like %s", c.Image, DefaultImage)
	}
	if !validPrefix(c.NamePrefix) {
		return invalid("name_prefix %q: use 1–32 letters, digits, '_', '-' or '.', starting with a letter or digit", c.NamePrefix)
	}
	if !validUser(c.User) {
		return invalid("user %q: write it as UID:GID with numbers, like %s (a name may not exist in every image)", c.User, DefaultUser)
	}
	switch c.Network {
	case "none", "bridge", "private", "slirp4netns", "pasta":
	case "host":
		return invalid("network \"host\" would give commands the host's network stack: use \"none\" or \"bridge\"")
	default:
		return invalid("network %q: use \"none\" (default), \"bridge\", \"private\", \"slirp4netns\" or \"pasta\"", c.Network)
	}
	return nil
}

// resolveResources parses and bounds the container's resources: memory,
// tmpfs_size, cpus, pids_limit, nofile and nproc.
func (c *Config) resolveResources() error {
	var err error
	if c.memoryBytes, err = parseBytes(c.Memory); err != nil || c.memoryBytes < 16<<20 {
		return invalid("memory %q: give a size of at least 16m, like \"512m\" or \"1g\"", c.Memory)
	}
	if c.tmpfsBytes, err = parseBytes(c.TmpfsSize); err != nil || c.tmpfsBytes < 1<<20 {
		return invalid("tmpfs_size %q: give a size of at least 1m, like \"64m\"", c.TmpfsSize)
	}
	if math.IsNaN(c.CPUs) || c.CPUs < 0.01 || c.CPUs > 1024 {
		return invalid("cpus %v: give a number of CPUs between 0.01 and 1024", c.CPUs)
	}
	if c.PidsLimit < 16 {
		return invalid("pids_limit %d: at least 16 (the init, the sleeper, a shell and its pipeline need some)", c.PidsLimit)
	}
	if c.Nofile < 64 {
		return invalid("nofile %d: at least 64", c.Nofile)
	}
	if hard, ok := hostHardLimit("Max open files"); ok && c.Nofile > hard {
		return invalid("nofile %d is above this host's hard limit %d (`ulimit -Hn`): a container cannot get more than the service has", c.Nofile, hard)
	}
	if c.Nproc == 0 {
		c.Nproc = defaultNproc()
	} else if hard, ok := hostHardLimit("Max processes"); ok && c.Nproc > hard {
		// Checked here rather than left to the start, which fails with
		// runc's bare "error setting rlimit type 6" long after the config
		// was read.
		return invalid("nproc %d is above this host's hard limit %d (`ulimit -Hu`): a container cannot get more than the service has; leave nproc unset for the highest that works", c.Nproc, hard)
	}
	return nil
}

// resolveTimers checks the durations and defaults pull_backoff.
func (c *Config) resolveTimers() error {
	for _, d := range []struct {
		name string
		v    Duration
	}{{"idle_timeout", c.IdleTimeout}, {"max_uptime", c.MaxUptime}, {"kill_grace", c.KillGrace}, {"pull_backoff", c.PullBackoff}, {"pull_backoff_max", c.PullBackoffMax}} {
		if d.v < 0 {
			return invalid("%s must not be negative, got %s", d.name, time.Duration(d.v))
		}
	}
	if c.AgentPath != "" && !filepath.IsAbs(c.AgentPath) {
		return invalid("agent_path %q: give an absolute path to a wai-agent binary", c.AgentPath)
	}
	if c.KillGrace > Duration(time.Minute) {
		return invalid("kill_grace %s: at most 1m", time.Duration(c.KillGrace))
	}
	if c.PullBackoff == 0 {
		c.PullBackoff = Duration(time.Second)
	}
	if c.PullBackoffMax < c.PullBackoff {
		return invalid("pull_backoff_max (%s) must not be below pull_backoff (%s)", time.Duration(c.PullBackoffMax), time.Duration(c.PullBackoff))
	}
	return nil
}

func (c *Config) checkEnv() error {
	for k, v := range c.Env {
		if !backend.ValidEnvName(k) || k == markerVar {
			return invalid("env %q: names are [A-Za-z_][A-Za-z0-9_]*, and %s is reserved", k, markerVar)
		}
		if strings.ContainsAny(v, "\x00") {
			return invalid("env %s: the value contains a NUL byte", k)
		}
	}
	return nil
}

// resolveWorkspace parses workspace_size and places workspace_dir (under
// stateDir unless set).
func (c *Config) resolveWorkspace(stateDir string) error {
	var err error
	if c.workspaceBytes, err = parseBytes(c.WorkspaceSize); err != nil || c.workspaceBytes != 0 && c.workspaceBytes < minWorkspaceBytes {
		return invalid("workspace_size %q: give a size of at least 8m, like \"1g\", or \"0\" for no limit", c.WorkspaceSize)
	}
	if c.WorkspaceDir == "" {
		if stateDir == "" {
			return invalid("no workspace_dir and no state directory to put workspaces in")
		}
		c.WorkspaceDir = filepath.Join(stateDir, "podman")
	}
	if c.WorkspaceDir, err = filepath.Abs(c.WorkspaceDir); err != nil {
		return invalid("workspace_dir %q: %v", c.WorkspaceDir, err)
	}
	return c.checkWorkspaceDir()
}

func (c *Config) checkMounts() error {
	bad := func(format string, args ...any) error {
		return backend.Errorf(backend.ErrInvalid, "config", "", "backend podman: "+format, args...)
	}
	if len(c.HostMounts) > 0 && len(c.AllowedHostRoots) == 0 {
		return bad("host_mounts need allowed_host_roots: list the host directories mounts may copy from")
	}
	for i, r := range c.AllowedHostRoots {
		if !filepath.IsAbs(r) {
			return bad("allowed_host_roots[%d] %q must be an absolute path", i, r)
		}
	}
	for i := range c.HostMounts {
		m := &c.HostMounts[i]
		if !filepath.IsAbs(m.HostPath) {
			return bad("host_mounts[%d].host_path %q must be an absolute path", i, m.HostPath)
		}
		mp := strings.TrimPrefix(strings.TrimPrefix(m.MountPath, ContainerWorkspace), "/")
		clean := path.Clean("/" + mp)[1:]
		if mp == "" || clean == "" || clean != strings.TrimSuffix(mp, "/") || strings.HasPrefix(clean, "..") {
			return bad("host_mounts[%d].mount_path %q must be a path inside the workspace without . or .. elements, like \"src\"", i, m.MountPath)
		}
		m.MountPath = clean
		for _, g := range append(append([]string{}, m.Include...), m.Exclude...) {
			if _, err := path.Match(strings.ReplaceAll(g, "**", "*"), ""); err != nil {
				return bad("host_mounts[%d]: bad glob %q: %v", i, g, err)
			}
		}
		if m.MaxBytes < 0 {
			return bad("host_mounts[%d].max_bytes must not be negative", i)
		}
		if m.MaxBytes == 0 {
			m.MaxBytes = defaultMountBytes
		}
	}
	return nil
}

// networkEnabled reports whether commands get a network beyond loopback.
func (c Config) networkEnabled() bool { return c.Network != "none" }

// agentEnabled reports whether commands go through wai-agent (the default).
func (c Config) agentEnabled() bool { return c.Agent }

// Interface guards
var (
	_ json.Unmarshaler = (*Duration)(nil)
	_ json.Marshaler   = Duration(0)
)
