//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"path"
	"path/filepath"

	"github.com/containers/podman/v5/libpod/define"
	spec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/wai-dev/wai/host/backend"
)

// Background jobs in managed containers run on the session jobs' machinery
// (jobs.go): `wai-agent job run` in a detached exec, the job's files under
// /tmp/.wai-jobs in the container, the deadline on the host. Only three
// things differ: the agent binary is bind-mounted into managed containers
// too (read-only, at the same path, outside every mount the agent may
// ask for), a job's cwd is a container path (default the container's
// working directory), and the host's deadline records live beside the
// container's metadata, so destroying the container forgets them.

// containerAgentMount is wai-agent's read-only bind in a managed
// container; none when the backend has no agent binary. A requested
// mount at the same path is refused: it would hide or replace the binary.
func (b *Backend) containerAgentMount(requested []spec.Mount) ([]spec.Mount, error) {
	for _, m := range requested {
		if m.Destination == agentMountPath || underAny(m.Destination, agentMountPath) {
			return nil, backend.Errorf(backend.ErrInvalid, "containers.create", m.Destination,
				"%s is reserved for wai-agent, which runs background jobs: mount elsewhere", agentMountPath)
		}
	}
	if b.agentBin == "" {
		return nil, nil
	}
	return []spec.Mount{{Destination: agentMountPath, Type: "bind", Source: b.agentBin,
		Options: []string{"bind", "ro", "nosuid", "nodev"}}}, nil
}

// ContainerJobs returns the background jobs of a managed container of
// ref's owner.
func (b *Backend) ContainerJobs(ctx context.Context, ref backend.ContainerRef) (backend.JobRunner, error) {
	const op = "containers.jobs"
	data, err := b.lookup(ctx, op, ref)
	if err != nil {
		return nil, err
	}
	if b.agentBin == "" {
		return nil, backend.Errorf(backend.ErrUnavailable, op, ref.Name,
			"background jobs need wai-agent in the container: build wai with `make build` (which embeds it) and do not set agent = false in [backends.podman]")
	}
	if !hasAgentMount(data) {
		return nil, backend.Errorf(backend.ErrUnavailable, op, ref.Name,
			"the container was created without wai-agent (by an older wai, or with the agent off), which background jobs need: "+
				"snapshot it, then restore the snapshot as a new container (it gets wai-agent and keeps the files; destroying the old one loses them)")
	}
	w := b.managedWorkspace(ref, data)
	w.workdir = "/"
	if data.Config != nil && path.IsAbs(data.Config.WorkingDir) {
		w.workdir = path.Clean(data.Config.WorkingDir)
	}
	return w, nil
}

func hasAgentMount(data *define.InspectContainerData) bool {
	for _, m := range data.Mounts {
		if m.Destination == agentMountPath {
			return true
		}
	}
	return false
}

// jobCwd is where a job runs: a workspace path in a session's container;
// in a managed one an absolute container path, by default the
// container's working directory.
func (w *Workspace) jobCwd(ctx context.Context, op, cwd string) (string, error) {
	if !w.managed {
		return w.shell.cwd(ctx, op, cwd)
	}
	if cwd == "" {
		return w.workdir, nil
	}
	if !path.IsAbs(cwd) {
		return "", backend.Errorf(backend.ErrInvalid, op, cwd, "the working directory is an absolute container path")
	}
	return path.Clean(cwd), nil
}

// deadlinesDir holds the host's records of the job deadlines: beside the
// session's state file, or in a managed container's metadata directory
// (removed with the container).
func (w *Workspace) deadlinesDir() string {
	if w.managed {
		return filepath.Join(filepath.Dir(w.b.metaPath(w.name)), "jobs")
	}
	return jobDeadlinesDir(w.statePath)
}

// Interface guards
var _ backend.ContainerJobs = (*Backend)(nil)
