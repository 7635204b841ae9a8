//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/containers/podman/v5/pkg/specgen"
	spec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/wai-dev/wai/host/backend"
)

// specMounts gives the container its mounts: the requested ones, checked
// (containerMounts), and wai-agent's.
func (b *Backend) specMounts(s *specgen.SpecGenerator, req backend.ContainerSpec, info *backend.ContainerInfo) error {
	var err error
	if s.Mounts, info.Mounts, err = b.containerMounts(req); err != nil {
		return err
	}
	agent, err := b.containerAgentMount(s.Mounts)
	if err != nil {
		return err
	}
	s.Mounts = append(s.Mounts, agent...)
	return nil
}

// containerMounts checks each mount against allowed_host_roots (after
// following every symlink of the host path) and forces read-only unless
// containers.allow_write_mounts; mount_cwd adds the session workspace.
func (b *Backend) containerMounts(req backend.ContainerSpec) ([]spec.Mount, []backend.ContainerMount, error) {
	const op = "containers.create"
	var ms []spec.Mount
	var shown []backend.ContainerMount
	if req.MountWorkspace && !b.cfg.volumeMode() { // a volume: mountWorkspaceVolume
		p, err := b.cfg.pathsFor(backend.WorkspaceSpec{Session: req.Owner.Session, User: req.Owner.User})
		if err != nil {
			return nil, nil, err
		}
		ms = append(ms, spec.Mount{Destination: ContainerWorkspace, Type: "bind", Source: p.dir, Options: []string{"rbind", "rw", "nosuid", "nodev"}})
		shown = append(shown, backend.ContainerMount{HostPath: p.dir, ContainerPath: ContainerWorkspace})
	}
	for _, m := range req.Mounts {
		host, err := b.allowedHostPath(op, m.HostPath)
		if err != nil {
			return nil, nil, err
		}
		dst := m.ContainerPath
		if !path.IsAbs(dst) || path.Clean(dst) != dst || dst == "/" || underAny(dst, "/proc", "/sys", "/dev") {
			return nil, nil, backend.Errorf(backend.ErrInvalid, op, dst, "container_path must be a clean absolute path other than /, /proc, /sys and /dev")
		}
		if req.MountWorkspace && dst == ContainerWorkspace {
			return nil, nil, backend.Errorf(backend.ErrInvalid, op, dst, "mount_cwd mounts the workspace there already")
		}
		ro := m.ReadOnly || !b.cfg.Containers.AllowWriteMounts
		mode := "rw"
		if ro {
			mode = "ro"
		}
		ms = append(ms, spec.Mount{Destination: dst, Type: "bind", Source: host, Options: []string{"rbind", mode, "nosuid", "nodev"}})
		shown = append(shown, backend.ContainerMount{HostPath: host, ContainerPath: dst, ReadOnly: ro})
	}
	return ms, shown, nil
}

// allowedHostPath resolves p (every symlink followed) and checks that it
// lies under allowed_host_roots.
func (b *Backend) allowedHostPath(op, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", backend.Errorf(backend.ErrInvalid, op, p, "host_path must be an absolute path")
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		return "", backend.Errorf(backend.ErrNotFound, op, p, "the host path does not exist")
	}
	if len(b.cfg.AllowedHostRoots) == 0 {
		return "", backend.Errorf(backend.ErrPermission, op, p,
			"no host path may be used: list the directories containers may use in allowed_host_roots of [backends.podman]")
	}
	if _, ok := underRoot(b.cfg.AllowedHostRoots, real); !ok {
		return "", backend.Errorf(backend.ErrPermission, op, p,
			"%s is not under allowed_host_roots %v of [backends.podman]", real, b.cfg.AllowedHostRoots)
	}
	return real, nil
}

func underAny(p string, roots ...string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}
