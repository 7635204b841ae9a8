package pdk

import (
	"fmt"
)

// Policy actions: what a CheckRequest asks about.
const (
	ActionShellExec      = "shell.exec"
	ActionShellScript    = "shell.script"
	ActionFSWrite        = "fs.write"
	ActionFSEdit         = "fs.edit"
	ActionFSRemove       = "fs.remove"
	ActionLifecycleStart = "lifecycle.start"
	ActionLifecycleStop  = "lifecycle.stop"
	// The containers operations: "containers." and the operation.
	ActionContainersCreate     = "containers.create"
	ActionContainersDestroyAll = "containers.destroy_all"
	// ActionContainersRestore creates a container from a snapshot: a
	// policy gating creates gates it too.
	ActionContainersRestore = "containers.restore"
	// ActionContainersCreateNetwork makes a network; with Egress, one
	// with a route out.
	ActionContainersCreateNetwork = "containers.create_network"
)

// CheckRequest is what a policy is asked: may this action happen?
type CheckRequest struct {
	Action  string   `json:"action"`
	Command []string `json:"command,omitempty"` // argv, or ["/bin/sh","-c",shell]
	Shell   string   `json:"shell,omitempty"`   // the shell string, when the command is one
	Script  string   `json:"script,omitempty"`  // shell.script: the script text
	Cwd     string   `json:"cwd,omitempty"`
	EnvKeys []string `json:"env_keys,omitempty"`
	Path    string   `json:"path,omitempty"` // fs.*: the path concerned, as requested
	// ResolvedPath (fs.write, fs.edit, fs.remove): the entry the mutation
	// changes, relative to the workspace root: Path with every symlink
	// followed inside the workspace, chroot-style (the last element too,
	// except for fs.remove). Chroot-style is not how the workspace's
	// commands follow them: an absolute target "/x" means the workspace's
	// "x" here, the system's /x in a shell; a link among the parent
	// directories that leads nowhere in the workspace fails the call
	// before any policy is asked, and so does a last element that is
	// absolute or climbs out and whose target the workspace lacks (a
	// relative link inside is written through, creating its target).
	// Judge both:
	// with "p -> protected", Path is "p/new" and ResolvedPath
	// "protected/new".
	ResolvedPath string `json:"resolved_path,omitempty"`
	Tool         string `json:"tool,omitempty"` // the tool whose call caused it, if any
	Session      string `json:"session,omitempty"`
	// Container describes a containers.* action (never an environment
	// value). On a shell.exec it says the command runs in that managed
	// container (Operation exec, exec_background or create; Container its
	// name, "" for a create that generates one), not in the session's
	// sandbox; Cwd is then the container's directory. nil for the others.
	// A command policy that ignores it judges container commands as
	// session ones.
	Container *ContainerCheck `json:"container,omitempty"`
}

// ContainerCheck is what a containers.* action asks for (docs/ABI.md).
type ContainerCheck struct {
	Operation      string   `json:"operation"`
	Container      string   `json:"container,omitempty"`
	Image          string   `json:"image,omitempty"`
	Network        string   `json:"network,omitempty"`
	MountPaths     []string `json:"mount_paths,omitempty"`
	EnvPassthrough string   `json:"env_passthrough,omitempty"` // auto, all, none or list
	ForwardGit     bool     `json:"forward_git,omitempty"`
	ForwardGh      bool     `json:"forward_gh,omitempty"`
	ForwardSSH     bool     `json:"forward_ssh,omitempty"`
	GPU            bool     `json:"gpu,omitempty"`
	Persistent     bool     `json:"persistent,omitempty"`
	Count          int      `json:"count"`              // the session's containers now
	Snapshot       string   `json:"snapshot,omitempty"` // snapshot, restore, delete_snapshot
	// DotfilesRepo is the dotfiles repository a create clones, any
	// secret in it masked.
	DotfilesRepo string `json:"dotfiles_repo,omitempty"`
	// Egress: create_network asks for a route out. Project and Service:
	// the compose service a create (or compose_*) is for.
	Egress  bool   `json:"egress,omitempty"`
	Project string `json:"project,omitempty"`
	Service string `json:"service,omitempty"`
	// DockerfileBuild: a try-repo create on a backend that builds
	// Dockerfiles; the repository's RUN steps may run in a build
	// container.
	DockerfileBuild bool `json:"dockerfile_build,omitempty"`
	// RepoURL is the repository a try-repo create clones (a file:// one
	// is also among MountPaths).
	RepoURL string `json:"repo_url,omitempty"`
}

// Decision is a policy's answer: allow, deny, or ask a person.
type Decision struct {
	Allow bool
	// Ask asks a person to approve the action; Reason says why. Where
	// nobody can be asked (a client without MCP elicitation, the CLI),
	// the kernel denies it.
	Ask    bool
	Reason string
	// ConfigKey optionally names the key of the policy's config that
	// would allow the action without asking; refusals point to it.
	ConfigKey string
}

// Allow allows the action.
func Allow() Decision { return Decision{Allow: true} }

// Deny refuses the action; the reason reaches the caller.
func Deny(format string, args ...any) Decision {
	return Decision{Reason: fmt.Sprintf(format, args...)}
}

// Ask asks a person to approve the action (once, or for the session):
// the reason is shown to them, and configKey (may be empty) names the
// policy config key that would allow it without asking.
func Ask(configKey, format string, args ...any) Decision {
	return Decision{Ask: true, Reason: fmt.Sprintf(format, args...), ConfigKey: configKey}
}
