//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"

	"github.com/containers/podman/v5/pkg/specgen"

	"github.com/wai-dev/wai/host/backend"
)

// PrecheckContainer applies the create's own rules that need nothing
// made yet: refused privileges, the name, the network (bridge needs
// allow_network_egress) and every mount's host path (under
// allowed_host_roots). The kernel runs it before asking a person.
func (b *Backend) PrecheckContainer(_ context.Context, req backend.ContainerSpec) error {
	const op = "containers.create"
	if err := refusePrivileges(req); err != nil {
		return err
	}
	if req.Name != "" {
		if _, err := b.containerName(req.Name, req.Purpose); err != nil {
			return err
		}
	}
	// A scratch spec: containerNetwork checks and fills it, nothing else.
	if err := b.containerNetwork(specgen.NewSpecGenerator("precheck", false), req); err != nil {
		return err
	}
	for _, m := range req.Mounts {
		if _, err := b.allowedHostPath(op, m.HostPath); err != nil {
			return err
		}
	}
	return nil
}

// Interface guards
var _ backend.ContainerPrechecker = (*Backend)(nil)
