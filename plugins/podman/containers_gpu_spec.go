//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"strings"

	"github.com/containers/podman/v5/pkg/specgen"
	spec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/wai-dev/wai/host/backend"
)

// localService reports whether the Podman service runs on this machine,
// where its CDI specs can be read.
func (b *Backend) localService() bool { return strings.HasPrefix(b.cfg.URL, "unix://") }

// addGPU gives a container every NVIDIA GPU through CDI when the host has
// the spec; without it the create fails saying what to install, rather
// than leaving the service to fail with a CDI resolution error. A remote
// service's host cannot be looked at from here: the device is asked for
// and the service answers.
func (b *Backend) addGPU(s *specgen.SpecGenerator, name string) error {
	if b.localService() {
		if g := detectGPU(b.cfg.Containers.CDISpecDirs); g.CDISpec == "" {
			return backend.Errorf(backend.ErrUnavailable, "containers.create", name,
				"gpu = true, but this host has no NVIDIA CDI spec in %s: %s; or create without gpu",
				strings.Join(b.cfg.Containers.CDISpecDirs, ", "), gpuSetupAdvice)
		}
	}
	s.Devices = append(s.Devices, spec.LinuxDevice{Path: GPUDevice})
	return nil
}

// gpuCheck is preflight's GPU check: optional, since most containers need
// no GPU and a host without one is ready for them.
func (b *Backend) gpuCheck() backend.PreflightCheck {
	c := backend.PreflightCheck{Name: "gpu", Optional: true}
	if !b.localService() {
		c.Passed = true
		c.Detail = "the Podman service is remote (" + b.cfg.URL + "): its GPUs cannot be checked from here; a create with gpu = true asks it for " + GPUDevice
		return c
	}
	g := detectGPU(b.cfg.Containers.CDISpecDirs)
	tools := []string{}
	for name, p := range map[string]string{"nvidia-smi": g.SMI, "nvidia-ctk": g.Toolkit} {
		if p == "" {
			tools = append(tools, name+" absent")
		} else {
			tools = append(tools, name+" at "+p)
		}
	}
	if len(tools) == 2 && tools[0] > tools[1] {
		tools[0], tools[1] = tools[1], tools[0]
	}
	c.Passed = g.CDISpec != ""
	if c.Passed {
		c.Detail = "NVIDIA GPU available to containers (CDI spec " + g.CDISpec + "; " + strings.Join(tools, ", ") + "): gpu = true works"
		return c
	}
	c.Detail = "no NVIDIA GPU for containers: no CDI spec naming nvidia.com/gpu in " + strings.Join(b.cfg.Containers.CDISpecDirs, ", ") +
		" (" + strings.Join(tools, ", ") + "); containers without gpu are unaffected"
	c.Guidance = gpuSetupAdvice
	return c
}
