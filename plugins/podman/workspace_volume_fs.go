//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import "github.com/wai-dev/wai/host/backend"

// volumeFiles returns the Filesystem of a volume workspace: its files are
// on the service's machine, reachable only from inside the container, so
// wai-agent serves them there (agentFS; CopyIn included, so the kernel's
// copy-in of a person's host directory works too). Without the agent there is no
// way to them: Open says so rather than hand out a workspace whose file
// tools all fail.
func (b *Backend) volumeFiles(w *Workspace) (backend.Filesystem, error) {
	if !b.cfg.agentEnabled() || b.agentBin == "" {
		return nil, backend.Errorf(backend.ErrUnavailable, "open", w.volume,
			"backend podman: a volume workspace's files are served by wai-agent in the container, and this backend runs without it "+
				"(agent = false in [backends.podman], or a build without the agent: `make build`): turn the agent on, or set workspace = \"bind\"")
	}
	return w.agentFS(), nil
}

// errVolumeHostSide refuses the host-directory side of a container copy
// for a volume session's workspace, whose files are on the service's
// machine, not under a host path here: such copies go container to
// container (copyVolume), and this is the guard behind that.
func errVolumeHostSide(op, p string) error {
	return backend.Errorf(backend.ErrUnavailable, op, p,
		"the session workspace is a Podman volume on the service's machine, not a directory here: copy with an absolute host_path under allowed_host_roots, "+
			"or move files between the containers with a command (workspace = \"bind\" in [backends.podman] makes the workspace a host directory again)")
}
