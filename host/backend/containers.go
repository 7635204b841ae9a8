package backend

import (
	"context"
	"io/fs"
	"time"
)

// Containers is implemented by backends that can run containers an agent
// manages beyond its session's sandbox: to try a repository in a clean
// environment, run a service next to its code, or hand a ready
// environment to a person. The kernel is the only caller that may be
// trusted with it: it applies the policy chain and limits first, resolves
// what comes from the host (environment, credentials) and passes the
// result here. A backend enforces its own hard rules on top (hardening,
// allowed mount roots, refused privileges) whoever asks.
//
// Every container belongs to one user (ContainerOwner.User) and was made by
// one of that user's sessions; a backend never shows or touches another
// user's containers: for them it answers ErrNotFound, as for a name that
// does not exist.
type Containers interface {
	// ContainersPreflight checks that containers can be created here.
	ContainersPreflight(ctx context.Context) (ContainerPreflight, error)
	// CreateContainer creates and starts a container and provisions it
	// (ContainerSpec.Files). A refused request is ErrInvalid or
	// ErrPermission; a name in use is ErrExist.
	CreateContainer(ctx context.Context, spec ContainerSpec) (ContainerInfo, error)
	// ExecContainer runs one command in a running container, with the
	// result, limits, truncation and tree-kill on timeout of
	// Shell.Execute (Cwd is a container path). A container that is not
	// running is ErrUnavailable naming its state.
	ExecContainer(ctx context.Context, ref ContainerRef, req ExecRequest) (ExecResult, error)
	// ListContainers lists the owner's containers (of every session of
	// the user when owner.Session is empty), sorted by name. Labels on the
	// containers are the source of truth: it works without metadata.
	ListContainers(ctx context.Context, owner ContainerOwner) ([]ContainerInfo, error)
	// ContainerStatus describes one container; with healthCheck, a
	// running one is probed with an exec (ContainerInfo.Health).
	ContainerStatus(ctx context.Context, ref ContainerRef, healthCheck bool) (ContainerInfo, error)
	// DestroyContainer stops (force: kills at once) and removes one
	// container and its metadata.
	DestroyContainer(ctx context.Context, ref ContainerRef, force bool) (ContainerInfo, error)
	// StopContainer stops a running container (force: kills at once)
	// and keeps it, files and all, for StartContainer; a stopped one is
	// left as it is.
	StopContainer(ctx context.Context, ref ContainerRef, force bool) (ContainerInfo, error)
	// StartContainer starts a stopped container again, with the files it
	// had (a persistent container a host restart or `podman stop`
	// stopped, say); a running one is left as it is.
	StartContainer(ctx context.Context, ref ContainerRef) (ContainerInfo, error)
	// DestroyContainers destroys every container ListContainers(owner)
	// lists, or only the non-persistent ones with keepPersistent (what a
	// closing session does). Failures are joined; the rest goes ahead.
	DestroyContainers(ctx context.Context, owner ContainerOwner, keepPersistent bool) ([]ContainerInfo, error)
	// CopyToContainer copies a host file or directory into a container;
	// CopyFromContainer the other way. The host side is confined to the
	// allowed roots (symlinks never lead out) and both are size-capped.
	CopyToContainer(ctx context.Context, ref ContainerRef, req ContainerCopy) (ContainerCopyResult, error)
	CopyFromContainer(ctx context.Context, ref ContainerRef, req ContainerCopy) (ContainerCopyResult, error)
	// InteractiveHint returns the command a person runs for a shell in
	// the container.
	InteractiveHint(ctx context.Context, ref ContainerRef) (InteractiveHint, error)
}

// ContainerOwner names whose containers an operation concerns.
type ContainerOwner struct {
	User    string // "" for a session without a user
	Session string // the session's name as the backend knows it
}

// ContainerRef names one container of an owner.
type ContainerRef struct {
	Owner ContainerOwner
	Name  string
}

// ContainerSpec is a container to create, with everything from the host
// already resolved by the kernel.
type ContainerSpec struct {
	Owner   ContainerOwner
	Name    string // "" generates one from Purpose
	Image   string // "" is the backend's default
	Purpose string
	Workdir string // "" is /workspace with MountWorkspace, else the image's
	Mounts  []ContainerMount
	// MountWorkspace mounts the session's workspace at /workspace.
	MountWorkspace bool
	Ports          []ContainerPort
	// Env holds variables set explicitly; EnvPassthrough picks more from
	// HostEnv (the environment of the process the request came from)
	// with the backend's configured patterns: see PassthroughEnv. Env
	// wins over what passes through. Values are secrets: they never
	// appear in results, events or metadata (names only, see
	// ContainerInfo.EnvKeys).
	Env            map[string]string
	EnvPassthrough EnvPassthrough
	HostEnv        map[string]string
	// Files are written into the container after it starts, owned by the
	// container's user (forwarded git configuration, say). A relative
	// Path is relative to the container user's home.
	Files []ContainerFile
	// Memory is a byte count or a size ("512m", "4g"); "" is the
	// backend's default.
	Memory     string
	Network    string // "" or "none": no network (the default); "bridge": a route out (gated); or a managed network
	Persistent bool
	// Provisioning records what was forwarded (forward_git, …) for the
	// metadata; it changes nothing by itself.
	Provisioning map[string]bool
	// Refused outright by every backend; here so a request asking for
	// them is refused with a reason rather than silently not honoured.
	Privileged bool
	HostPID    bool
	HostIPC    bool
	Devices    []string
	// GPU asks for the host's NVIDIA GPUs: a backend without a way to
	// give them refuses it (ErrUnavailable saying what to install), never
	// creates the container without.
	GPU bool
	// Command is what the container runs; empty keeps it idle (sleep)
	// for exec. A compose service's command goes here.
	Command []string
	// Project and Service name the compose service the container runs
	// ("" for none); on a managed network Service is also a DNS alias.
	Project string
	Service string
}

// ContainerMount binds a host path into a container.
type ContainerMount struct {
	HostPath      string `json:"host_path"`
	ContainerPath string `json:"container_path"`
	// ReadOnly is forced on unless the backend's config allows writable
	// mounts.
	ReadOnly bool `json:"read_only"`
}

// ContainerPort publishes a container port on the host's loopback only.
type ContainerPort struct {
	HostPort      uint16 `json:"host_port"` // 0: any free port
	ContainerPort uint16 `json:"container_port"`
	Protocol      string `json:"protocol,omitempty"` // "tcp" (default) or "udp"
}

// ContainerFile is a file to provision into a container.
type ContainerFile struct {
	Path string
	Data []byte
	Mode fs.FileMode
}

// ContainerInfo describes a managed container. It never holds a secret.
type ContainerInfo struct {
	Name       string           `json:"name"`
	ID         string           `json:"id"`
	Image      string           `json:"image"`
	Purpose    string           `json:"purpose,omitempty"`
	Session    string           `json:"session"`
	User       string           `json:"user,omitempty"`
	Created    time.Time        `json:"created"`
	Persistent bool             `json:"persistent"`
	State      string           `json:"state"` // running, exited, created, …
	Running    bool             `json:"running"`
	Mounts     []ContainerMount `json:"mounts,omitempty"`
	Ports      []ContainerPort  `json:"ports,omitempty"`
	EnvKeys    []string         `json:"env_keys,omitempty"`
	// Provisioning says what was forwarded (from the metadata; empty when
	// the metadata is lost).
	Provisioning map[string]bool `json:"provisioning,omitempty"`
	// Health is set by ContainerStatus: the outcome of a probe exec.
	Health string `json:"health,omitempty"`
	// Network is the managed network it is attached to, if any; Project
	// and Service the compose service it runs.
	Network string `json:"network,omitempty"`
	Project string `json:"project,omitempty"`
	Service string `json:"service,omitempty"`
	// EarlierSession is set by the kernel's list on a persistent
	// container another session of the user made (one before a
	// reconnect, say): the backend leaves it false.
	EarlierSession bool `json:"earlier_session,omitempty"`
}

// ContainerCopy copies between a host path and a container path.
type ContainerCopy struct {
	HostPath      string
	ContainerPath string
}

// ContainerCopyResult says what a copy moved.
type ContainerCopyResult struct {
	HostPath      string `json:"host_path"`
	ContainerPath string `json:"container_path"`
	Files         int    `json:"files"`
	Bytes         int64  `json:"bytes"`
}

// InteractiveHint is how a person gets a shell in a container.
type InteractiveHint struct {
	Container string `json:"container"`
	Shell     string `json:"shell"`
	Command   string `json:"command"`
}

// ContainerPreflight is the outcome of ContainersPreflight.
type ContainerPreflight struct {
	Ready   bool             `json:"ready"`
	Runtime string           `json:"runtime"`
	Checks  []PreflightCheck `json:"checks"`
	Summary string           `json:"summary"`
}

// PreflightCheck is one check with guidance when it failed.
type PreflightCheck struct {
	Name     string `json:"name"`
	Passed   bool   `json:"passed"`
	Detail   string `json:"detail"`
	Guidance string `json:"guidance,omitempty"`
	// Optional marks a check for a feature few containers use (a GPU):
	// failing it does not make containers not ready.
	Optional bool `json:"optional,omitempty"`
}

// ContainerPrechecker is implemented by a Containers backend that can
// tell, before anything is made, whether it would refuse a create by its
// own rules (a network it does not allow, a mount outside its roots):
// the kernel asks it before it asks a person to approve the create, so
// nobody approves what the backend then refuses anyway. It returns the
// error CreateContainer would; nil promises nothing more.
type ContainerPrechecker interface {
	PrecheckContainer(ctx context.Context, spec ContainerSpec) error
}
