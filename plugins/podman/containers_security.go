//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"github.com/containers/podman/v5/pkg/specgen"
	spec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/wai-dev/wai/host/backend"
)

// harden applies what every container wai makes gets, the session's and
// the managed ones: no capabilities, no new privileges, both rlimits, and
// the resource limits given (the seccomp profile is set by the caller).
func (b *Backend) harden(s *specgen.SpecGenerator, mem int64, cpus float64, pids int64) {
	period := uint64(100000)
	quota := int64(cpus * float64(period))
	s.ResourceLimits = &spec.LinuxResources{
		// Swap is memory+swap: equal to the limit means no swap at all.
		Memory: &spec.LinuxMemory{Limit: &mem, Swap: &mem},
		CPU:    &spec.LinuxCPU{Quota: &quota, Period: &period},
		Pids:   &spec.LinuxPids{Limit: pids},
	}
	s.CapDrop = []string{"ALL"}
	s.NoNewPrivileges = ptr(true)
	// Both rlimits, always, with the short names the service expects
	// ("RLIMIT_" is prefixed server-side). Naming only nofile makes podman
	// 4.3 fill nproc with a default above the host's hard limit, and the
	// start fails without CAP_SYS_RESOURCE.
	s.Rlimits = []spec.POSIXRlimit{
		{Type: "nofile", Soft: b.cfg.Nofile, Hard: b.cfg.Nofile},
		{Type: "nproc", Soft: b.cfg.Nproc, Hard: b.cfg.Nproc},
	}
}

// refusePrivileges refuses what no configuration allows: a container
// with them could take the host.
func refusePrivileges(req backend.ContainerSpec) error {
	const op = "containers.create"
	deny := func(what string) error {
		return backend.Errorf(backend.ErrPermission, op, req.Name, "%s is refused: wai never gives a managed container %s", what, what)
	}
	switch {
	case req.Privileged:
		return deny("--privileged")
	case req.HostPID:
		return deny("the host's PID namespace")
	case req.HostIPC:
		return deny("the host's IPC namespace")
	case len(req.Devices) > 0:
		return deny("host devices")
	case req.Network == "host":
		return deny("the host network")
	}
	return nil
}
