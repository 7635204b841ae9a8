package host

import (
	"context"
	"log/slog"

	"github.com/wai-dev/wai/host/backend"
)

// networksOf is the backend's ContainerNetworks, or ErrUnavailable
// saying the backend has none.
func networksOf(c backend.Containers, op string) (backend.ContainerNetworks, error) {
	n, ok := c.(backend.ContainerNetworks)
	if !ok {
		return nil, backend.Errorf(backend.ErrUnavailable, "containers."+op, "",
			"the session's backend does not manage networks: use backend = \"podman\", or create containers with network bridge or none")
	}
	return n, nil
}

// networkOp runs create_network, destroy_network and list_networks.
func (s *Session) networkOp(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, req ContainerRequest) (ContainerResponse, error) {
	var resp ContainerResponse
	n, err := networksOf(c, req.Operation)
	if err != nil {
		return resp, err
	}
	switch req.Operation {
	case "create_network":
		if req.Name == "" {
			return resp, backend.Errorf(backend.ErrInvalid, "containers.create_network", "", "give name: the network's name (containers join it with network = that name)")
		}
		info, err := n.CreateNetwork(ctx, backend.NetworkSpec{Owner: owner, Name: req.Name, Egress: req.Egress, Persistent: req.Persistent})
		if err != nil {
			return resp, err
		}
		s.containersUsed.Store(true)
		resp.Network = &info
		return resp, nil
	case "destroy_network":
		if req.Network == "" {
			return resp, backend.Errorf(backend.ErrInvalid, "containers.destroy_network", "", "give network: the network's name (list_networks shows them)")
		}
		info, err := n.DestroyNetwork(ctx, backend.ContainerRef{Owner: owner, Name: req.Network})
		resp.Network = &info
		return resp, err
	default:
		if req.AllSessions {
			owner.Session = ""
		}
		ls, err := n.ListNetworks(ctx, owner)
		resp.Networks = ls
		return resp, err
	}
}

// destroyNetworks removes the closing session's non-persistent networks,
// after its containers (a network in use cannot go).
func (s *Session) destroyNetworks(ctx context.Context, c backend.Containers) {
	n, ok := c.(backend.ContainerNetworks)
	if !ok {
		return
	}
	gone, err := n.DestroyNetworks(ctx, backend.ContainerOwner{User: s.spec.User, Session: s.spec.Session}, true)
	sweptEvents(ctx, s, "network", "network_", gone, func(g backend.NetworkInfo) string { return g.Name }, err)
}

// sweptEvents records what closing session s removed of one kind, an
// event each (name says it, under the attribute kind), and, when removing
// failed, why the rest stayed. prefix sets the kinds' event names apart
// ("containers.destroyed_with_session", "containers.network_cleanup_failed").
func sweptEvents[T any](ctx context.Context, s *Session, kind, prefix string, gone []T, name func(T) string, err error) {
	for _, g := range gone {
		s.k.log.LogAttrs(ctx, slog.LevelInfo, "containers."+prefix+"destroyed_with_session", slog.String("session", s.spec.Session), slog.String(kind, name(g)))
	}
	if err != nil {
		s.k.log.LogAttrs(ctx, slog.LevelWarn, "containers."+prefix+"cleanup_failed", slog.String("session", s.spec.Session), slog.String("error", err.Error()))
	}
}
