// Command containers is the bundled containers tool: it lets an agent
// manage containers of its own beside its session's sandbox — try a
// repository in a clean environment, run a service next to its code, hand
// a ready environment to a person (docs/containers.md).
//
// The tool only shapes requests and answers: every operation goes to the
// kernel through wai_containers (capability "containers"), which checks
// it, passes it through the policy chain and runs it on the backend. A
// refused or failed operation is a failed result with the reason, never
// a silent success.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wai-dev/wai/pdk"
)

// operations the tool offers (the kernel knows the same list).
var operations = []string{"preflight", "create", "exec", "exec_interactive_hint", "list", "status",
	"start", "stop", "destroy", "destroy_all", "copy_in", "copy_out", "exec_background", "exec_poll", "exec_cancel",
	"snapshot", "restore", "list_snapshots", "delete_snapshot",
	"create_network", "destroy_network", "list_networks", "compose_up", "compose_down", "compose_status"}

// outputBytes is the per-stream budget of an exec's output in the message;
// the structured value carries what the host returned.
const outputBytes = 32 << 10

type mount struct {
	HostPath      string `json:"host_path" jsonschema:"absolute host path under allowed_host_roots"`
	ContainerPath string `json:"container_path" jsonschema:"absolute path in the container"`
	ReadOnly      bool   `json:"read_only,omitempty" jsonschema:"mount read-only (forced unless the config allows writable mounts)"`
}

type port struct {
	HostPort      int    `json:"host_port,omitempty" jsonschema:"port on 127.0.0.1; 0 picks a free one"`
	ContainerPort int    `json:"container_port" jsonschema:"port in the container"`
	Protocol      string `json:"protocol,omitempty" enum:"tcp,udp"`
}

type params struct {
	Operation      string            `json:"operation" enum:"preflight,create,exec,exec_interactive_hint,list,status,start,stop,destroy,destroy_all,copy_in,copy_out,exec_background,exec_poll,exec_cancel,snapshot,restore,list_snapshots,delete_snapshot,create_network,destroy_network,list_networks,compose_up,compose_down,compose_status" jsonschema:"what to do"`
	Container      string            `json:"container,omitempty" jsonschema:"the container (exec, exec_background, exec_poll, exec_cancel, status, start, stop, destroy, copy_in, copy_out, snapshot, exec_interactive_hint): the name create returned"`
	Name           string            `json:"name,omitempty" jsonschema:"create, restore: the container's name (generated from purpose when empty); create_network: the network's name"`
	Image          string            `json:"image,omitempty" jsonschema:"create: the image (default: the configured one)"`
	Purpose        string            `json:"purpose,omitempty" jsonschema:"create: a profile, one of python, node, rust, go, general, clean, try-repo (image, setup, env, forwarding defaults; explicit parameters win); try-repo picks one from repo_url"`
	Command        string            `json:"command,omitempty" jsonschema:"exec, exec_background: the shell command to run with /bin/sh -c"`
	Timeout        int               `json:"timeout,omitempty" jsonschema:"exec and setup_commands: seconds before the command is killed (default 300; shortened to fit the tool call's deadline, and the answer says so: use exec_background for longer work); exec_background: the job's max runtime in seconds (default and maximum the host's, 1 hour unless configured)"`
	Workdir        string            `json:"workdir,omitempty" jsonschema:"create: the working directory; exec, exec_background: the directory to run in"`
	Mounts         []mount           `json:"mounts,omitempty" jsonschema:"create: host directories to mount (only under allowed_host_roots; read-only unless allowed)"`
	MountCwd       *bool             `json:"mount_cwd,omitempty" jsonschema:"create: mount the session workspace at /workspace (default true; false for a persistent container, which outlives the workspace)"`
	Ports          []port            `json:"ports,omitempty" jsonschema:"create: ports to publish, on 127.0.0.1 only"`
	Env            map[string]string `json:"env,omitempty" jsonschema:"create: variables to set; they win over passthrough"`
	EnvPassthrough json.RawMessage   `json:"env_passthrough,omitempty" jsonschema:"create: host variables to pass: auto (those the operator listed in env_patterns; none unless configured), none, all or a list of names (all and a list need the person's approval; wai's own WAI_* and its MCP token never pass)" default:"auto"`
	ForwardGit     *bool             `json:"forward_git,omitempty" jsonschema:"create: copy the host's git configuration in (never keys)"`
	ForwardGh      *bool             `json:"forward_gh,omitempty" jsonschema:"create: pass the host gh login as GH_TOKEN and GITHUB_TOKEN (needs approval)"`
	ForwardSSH     *bool             `json:"forward_ssh,omitempty" jsonschema:"create: copy ~/.ssh in (needs approval)"`
	SetupCommands  []string          `json:"setup_commands,omitempty" jsonschema:"create: commands to run once it is up"`
	MemoryLimit    string            `json:"memory_limit,omitempty" jsonschema:"create: memory limit, like 2g (at most the configured one)" default:"4g"`
	Network        string            `json:"network,omitempty" jsonschema:"create: none (the default: no network at all), a network create_network made (its containers reach each other by name, nothing outside), or bridge (reaches outside: needs the operator's allow_network_egress and the person's approval); destroy_network: the network" default:"none"`
	Persistent     bool              `json:"persistent,omitempty" jsonschema:"create, create_network, compose_up: keep it after the session ends (wai ps lists it, wai rm removes it; a later session's list shows it); a persistent container gets no /workspace mount: copy_in and copy_out move files"`
	Force          bool              `json:"force,omitempty" jsonschema:"destroy, stop: kill at once instead of stopping gracefully"`
	Confirm        bool              `json:"confirm,omitempty" jsonschema:"destroy_all: you mean it"`
	HealthCheck    bool              `json:"health_check,omitempty" jsonschema:"status: probe the container with an exec"`
	HostPath       string            `json:"host_path,omitempty" jsonschema:"copy_in, copy_out: a path in the session workspace, or absolute under allowed_host_roots"`
	ContainerPath  string            `json:"container_path,omitempty" jsonschema:"copy_in, copy_out: an absolute path in the container"`
	JobID          string            `json:"job_id,omitempty" jsonschema:"exec_poll, exec_cancel: the job id exec_background returned"`
	StdoutOffset   int64             `json:"stdout_offset,omitempty" jsonschema:"exec_poll: byte offset to read stdout from: the previous answer's stdout next, to get only new output (default 0)"`
	StderrOffset   int64             `json:"stderr_offset,omitempty" jsonschema:"exec_poll: byte offset to read stderr from: the previous answer's stderr next (default 0)"`
	GPU            bool              `json:"gpu,omitempty" jsonschema:"create, restore: every NVIDIA GPU of the host (needs approval; preflight says whether there is one)"`
	Snapshot       string            `json:"snapshot,omitempty" jsonschema:"snapshot: the snapshot's name (generated when empty); restore, delete_snapshot: the snapshot"`
	RepoURL        string            `json:"repo_url,omitempty" jsonschema:"create with purpose try-repo: a git URL (https, ssh, file) or a path in the session workspace to try"`
	Egress         bool              `json:"egress,omitempty" jsonschema:"create_network: give it a route out (only if the config allows; default internal: its containers reach each other, nothing else)"`
	File           string            `json:"file,omitempty" jsonschema:"compose_up: the compose file, in the workspace or absolute under allowed_host_roots"`
	Project        string            `json:"project,omitempty" jsonschema:"compose_up: the project name (default: the file's name key or directory); compose_down, compose_status: the project"`
	Dotfiles       *dotfiles         `json:"dotfiles,omitempty" jsonschema:"create: the user's dotfiles (default: the configured [dotfiles] repo, if any)"`
}

// dotfiles is create's dotfiles parameter (host.DotfilesRequest).
type dotfiles struct {
	Repo   string            `json:"repo,omitempty" jsonschema:"git URL (https, ssh, file) or a path in the session workspace; cloned inside the container after credential forwarding"`
	Branch string            `json:"branch,omitempty" jsonschema:"branch to clone (default: the repository's)"`
	Script string            `json:"script,omitempty" jsonschema:"install script relative to the repository (default: install.sh, setup.sh, bootstrap.sh, script/setup, Makefile, else link the common dotfiles)"`
	Target string            `json:"target,omitempty" jsonschema:"where to clone it" default:"~/.dotfiles"`
	Inline map[string]string `json:"inline,omitempty" jsonschema:"files to write, by path relative to the home directory"`
	Skip   bool              `json:"skip,omitempty" jsonschema:"apply no dotfiles, not even the configured ones"`
}

func init() {
	pdk.Declare("containers", "1.0.0", pdk.CapContainers)
	pdk.Tool("containers", "Manage isolated containers beside your session: preflight, then create one (from an image, with the workspace mounted at /workspace, "+
		"no network unless asked for, no host credentials unless configured or approved, optionally your git config), exec commands in it (or exec_background a long one and exec_poll it until it ends), "+
		"copy files in and out, list, status, stop and start (files kept), destroy (files gone). "+
		"Save a container as a named snapshot (its files; API keys are left out) and restore it later as a new container with create's parameters. "+
		"create_network makes a network whose containers reach each other by name (internal unless allowed); a route out (network bridge, egress) needs the person's approval; compose_up runs a compose file's services on one. "+
		"Use it to try a repository in a clean environment, run a service next to its code, or hand a person a shell (exec_interactive_hint). "+
		"Containers are hardened (no capabilities, no privilege escalation, memory and process limits) and go away with the session unless persistent "+
		"(a persistent one has no /workspace mount, and list shows it in later sessions).",
		run, pdk.Returns[response](), pdk.Destructive(true), pdk.OpenWorld(true), pdk.Title("Containers"))
}

func run(_ *pdk.Call, p params) (pdk.Result, error) {
	if !valid(p.Operation) {
		return pdk.Fail("unknown operation %q: use one of %s", p.Operation, strings.Join(operations, ", ")), nil
	}
	if p.Operation == "destroy_all" && !p.Confirm {
		return pdk.Fail("destroy_all removes every container of this session: call it again with confirm = true if you mean it"), nil
	}
	var resp response
	if err := pdk.Containers.Do(p, &resp); err != nil {
		return failed(p, err)
	}
	return answer(p, resp), nil
}

func valid(op string) bool {
	for _, o := range operations {
		if o == op {
			return true
		}
	}
	return false
}

// failed turns a refusal or failure into a failed result the model reads;
// internal errors stay errors.
func failed(p params, err error) (pdk.Result, error) {
	if errors.Is(err, pdk.ErrInternal) {
		return pdk.Result{}, err
	}
	what := "failed"
	if errors.Is(err, pdk.ErrPermission) {
		what = "denied"
	}
	return pdk.FailWith(fmt.Sprintf("%s %s: %v", p.Operation, what, err), response{Operation: p.Operation, Error: err.Error(), Kind: string(pdk.KindOf(err))}), nil
}
func main() {}
