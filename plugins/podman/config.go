package podman

import (
	"encoding/json"
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

// networkEnabled reports whether commands get a network beyond loopback.
func (c Config) networkEnabled() bool { return c.Network != "none" }

// agentEnabled reports whether commands go through wai-agent (the default).
func (c Config) agentEnabled() bool { return c.Agent }

// Interface guards
var (
	_ json.Unmarshaler = (*Duration)(nil)
	_ json.Marshaler   = Duration(0)
)
