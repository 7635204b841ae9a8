package host

import (
	"context"

	"github.com/wai-dev/wai/host/backend"
)

// checkContainers passes a containers action through the policy chain;
// for a create (a compose service's too) or restore on a backend that can precheck it, a policy's
// ask first hears the backend: a request it refuses by its own rules
// (bridge with egress off, a mount outside allowed_host_roots) fails
// with the backend's reason before the person is asked, as approving it
// could change nothing. A policy's deny still comes first, with the key
// that allows it.
func (s *Session) checkContainers(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, req ContainerRequest, chk CheckRequest) error {
	pc, ok := c.(backend.ContainerPrechecker)
	if !ok || req.Operation != "create" && req.Operation != "restore" {
		return s.check(ctx, chk)
	}
	spec := backend.ContainerSpec{Owner: owner, Name: req.Name, Purpose: req.Purpose, Network: req.Network, Mounts: req.Mounts,
		Ports: req.Ports, Privileged: req.Privileged, GPU: req.GPU}
	ask := func(ctx context.Context, policy string, r CheckRequest, d Decision) (string, error) {
		if err := pc.PrecheckContainer(ctx, spec); err != nil {
			return "backend_refuses", err
		}
		return s.askPerson(ctx, policy, r, d)
	}
	return s.k.chain.check(ctx, s.checkRequest(ctx, chk), ask)
}
