package host

import (
	"encoding/json"

	"github.com/wai-dev/wai/host/backend"
)

// ContainerOperations are the containers tool's operation values, and
// the policy actions "containers.<operation>".
var ContainerOperations = []string{"preflight", "create", "exec", "exec_interactive_hint", "list", "status",
	"start", "stop", "destroy", "destroy_all", "copy_in", "copy_out", "exec_background", "exec_poll", "exec_cancel",
	"snapshot", "restore", "list_snapshots", "delete_snapshot",
	"create_network", "destroy_network", "list_networks", "compose_up", "compose_down", "compose_status"}

// ActionContainersPrefix starts the policy action of every containers
// operation ("containers.create", …).
const ActionContainersPrefix = "containers."

// ContainerRequest is one containers operation, as the tool's input
// schema (docs/containers.md) spells it. The kernel decodes it strictly.
type ContainerRequest struct {
	Operation string `json:"operation"`
	Container string `json:"container,omitempty"` // the container of exec, status, destroy, copy_*, hint
	Name      string `json:"name,omitempty"`      // create: its name ("" generates one)
	Image     string `json:"image,omitempty"`
	Purpose   string `json:"purpose,omitempty"`
	Command   string `json:"command,omitempty"`
	// Timeout of exec, in seconds (default 300).
	Timeout        int                      `json:"timeout,omitempty"`
	Workdir        string                   `json:"workdir,omitempty"`
	Mounts         []backend.ContainerMount `json:"mounts,omitempty"`
	MountCwd       *bool                    `json:"mount_cwd,omitempty"` // default true
	Ports          []backend.ContainerPort  `json:"ports,omitempty"`
	Env            map[string]string        `json:"env,omitempty"`
	EnvPassthrough json.RawMessage          `json:"env_passthrough,omitempty"` // "auto" (default), "all", "none" or a list of names
	ForwardGit     bool                     `json:"forward_git,omitempty"`
	ForwardGh      bool                     `json:"forward_gh,omitempty"`
	ForwardSSH     bool                     `json:"forward_ssh,omitempty"`
	SetupCommands  []string                 `json:"setup_commands,omitempty"`
	MemoryLimit    string                   `json:"memory_limit,omitempty"`
	Network        string                   `json:"network,omitempty"`
	Persistent     bool                     `json:"persistent,omitempty"`
	Force          bool                     `json:"force,omitempty"`
	Confirm        bool                     `json:"confirm,omitempty"`
	HealthCheck    bool                     `json:"health_check,omitempty"`
	HostPath       string                   `json:"host_path,omitempty"`
	ContainerPath  string                   `json:"container_path,omitempty"`
	GPU            bool                     `json:"gpu,omitempty"`
	Privileged     bool                     `json:"privileged,omitempty"`
	// Dotfiles of create: a repository to clone and install, inline
	// files; nil takes [dotfiles] from the configuration.
	Dotfiles *DotfilesRequest `json:"dotfiles,omitempty"`
	// Snapshot names a snapshot: the one to take (snapshot; "" makes a
	// name), to create from (restore), or to delete (delete_snapshot).
	Snapshot string `json:"snapshot,omitempty"`
	// AllSessions is the operator's scope (wai containers): list every
	// container of the session's user, and act on any of them, not only
	// on the session's own and the user's persistent ones. Not part of the
	// tool's input.
	AllSessions bool `json:"-"`
	// JobID is the job of exec_poll and exec_cancel; the offsets are
	// exec_poll's, the previous answer's next ones.
	JobID        string `json:"job_id,omitempty"`
	StdoutOffset int64  `json:"stdout_offset,omitempty"`
	StderrOffset int64  `json:"stderr_offset,omitempty"`
	// RepoURL is the repository purpose "try-repo" clones: a git URL
	// (https, ssh, git, file) or a path in the session workspace.
	RepoURL string `json:"repo_url,omitempty"`
	// Given holds the parameters the request set, false and "" included
	// (DecodeContainerRequest fills it), so a profile fills in only the
	// rest; nil: non-zero values count as given.
	Given map[string]bool `json:"-"`
	// ProfileDotfiles is resolved by create from the purpose's profile
	// (true without a purpose, false for "clean"): whether the user's
	// configured dotfiles are applied to the container.
	ProfileDotfiles bool `json:"-"`
	// files are extra files provisioned at create (try-repo's tarball).
	files []backend.ContainerFile
	// Egress: create_network makes a network with a route out (needs the
	// backend's allow_network_egress).
	Egress bool `json:"egress,omitempty"`
	// File is compose_up's compose file: in the workspace, or absolute
	// under allowed_host_roots. Project names a compose project
	// (compose_up: default the file's name key or its directory).
	File    string `json:"file,omitempty"`
	Project string `json:"project,omitempty"`
	// ServiceCommand and Service: a compose service's create (set by
	// compose_up, not part of the tool's input).
	ServiceCommand []string `json:"-"`
	Service        string   `json:"-"`
}

// ContainerResponse is what an operation did; only its own fields are set.
type ContainerResponse struct {
	Operation  string                       `json:"operation"`
	Container  *backend.ContainerInfo       `json:"container,omitempty"`
	Containers []backend.ContainerInfo      `json:"containers,omitempty"`
	Exec       *ContainerExecResult         `json:"exec,omitempty"`
	Setup      []ContainerExecResult        `json:"setup,omitempty"`
	Copy       *backend.ContainerCopyResult `json:"copy,omitempty"`
	Hint       *backend.InteractiveHint     `json:"hint,omitempty"`
	Preflight  *backend.ContainerPreflight  `json:"preflight,omitempty"`
	// Notes tell the caller what was skipped and how to fix it
	// (forward_gh without a logged-in gh, say).
	Notes []string `json:"notes,omitempty"`
	// Job: exec_background, exec_poll and exec_cancel; Jobs: status, the
	// container's background jobs.
	Job  *ContainerJob  `json:"job,omitempty"`
	Jobs []ContainerJob `json:"jobs,omitempty"`
	// Dotfiles is what create applied of the user's dotfiles.
	Dotfiles *DotfilesResult `json:"dotfiles,omitempty"`
	// Snapshot is what snapshot took or delete_snapshot removed;
	// Snapshots what list_snapshots found.
	Snapshot  *backend.SnapshotInfo  `json:"snapshot,omitempty"`
	Snapshots []backend.SnapshotInfo `json:"snapshots,omitempty"`
	// Profile is what create's purpose resolved to (docs/containers.md,
	// "Profiles").
	Profile *ProfileResult `json:"profile,omitempty"`
	// Networks and compose (create_network, list_networks, compose_*).
	Network  *backend.NetworkInfo  `json:"network,omitempty"`
	Networks []backend.NetworkInfo `json:"networks,omitempty"`
	Compose  *ComposeStatus        `json:"compose,omitempty"`
}

// ContainerExecResult is an exec's outcome on the wire: the session
// shell's result with snake_case names.
type ContainerExecResult struct {
	Command    []string `json:"command"`
	Cwd        string   `json:"cwd,omitempty"`
	Stdout     string   `json:"stdout"`
	Stderr     string   `json:"stderr"`
	ExitCode   int      `json:"exit_code"`
	Signal     int      `json:"signal,omitempty"`
	TimedOut   bool     `json:"timed_out"`
	Truncated  bool     `json:"truncated"`
	DurationMS int64    `json:"duration_ms"`
	// TimeoutMS is the timeout the command ran with; TimeoutNote says why
	// it is shorter than asked (the call's deadline), or is empty.
	TimeoutMS   int64  `json:"timeout_ms,omitempty"`
	TimeoutNote string `json:"timeout_note,omitempty"`
}

func toContainerExec(r backend.ExecResult) ContainerExecResult {
	return ContainerExecResult{Command: r.Command, Cwd: r.Cwd, Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode,
		Signal: r.Signal, TimedOut: r.TimedOut, Truncated: r.Truncated, DurationMS: r.Duration.Milliseconds()}
}

// ContainerCheck is what a policy sees of a containers operation
// (CheckRequest.Container): never an environment value.
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
	// Count is how many managed containers the session has now.
	Count int `json:"count"`
	// DotfilesRepo is the dotfiles repository a create clones (requested
	// or configured), any secret in it masked.
	DotfilesRepo string `json:"dotfiles_repo,omitempty"`
	// Snapshot is the snapshot of snapshot, restore and delete_snapshot.
	Snapshot string `json:"snapshot,omitempty"`
	// RepoURL is the repository a try-repo create clones on the host; a
	// local one (file://) is also listed in MountPaths, as it is a host
	// path read for the agent.
	RepoURL string `json:"repo_url,omitempty"`
	// Egress: create_network asks for a route out. Project and Service:
	// the compose service a create (or compose_*) is for.
	Egress  bool   `json:"egress,omitempty"`
	Project string `json:"project,omitempty"`
	Service string `json:"service,omitempty"`
	// DockerfileBuild: a try-repo create on a backend that builds
	// Dockerfiles (build_dockerfiles): if the repository has one, its RUN
	// steps run in a build container. Known before the clone, so set
	// whatever the repository holds.
	DockerfileBuild bool `json:"dockerfile_build,omitempty"`
}

// DecodeContainerRequest decodes a containers request strictly.
func DecodeContainerRequest(raw []byte) (ContainerRequest, error) {
	var req ContainerRequest
	if err := backend.DecodeStrict(raw, &req); err != nil {
		return req, backend.Errorf(backend.ErrInvalid, "containers", "", "bad request: %v (docs/containers.md lists the parameters)", err)
	}
	req.Given = givenKeys(raw)
	return req, nil
}
