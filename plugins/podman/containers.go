//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"regexp"
	"strings"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
)

// Labels of the containers agents manage, besides labelManaged,
// labelSession and labelUser. wai.kind tells them from session
// containers: the session machinery (list, gc, ps of sessions) skips them.
const (
	labelKind       = "wai.kind" // "container"
	kindContainer   = "container"
	labelCreated    = "wai.created"    // RFC 3339
	labelPersistent = "wai.persistent" // "true" or "false"
	labelEnvKeys    = "wai.env_keys"   // comma-separated names, never values
	// labelHome is the workspace directory of the configuration that
	// made the container: each configuration (and its wai ps, rm, gc)
	// sees only its own, as with session containers.
	labelHome = "wai.home"
)

// ContainerHome is the home directory of the managed containers' user:
// forwarded configuration lands there.
const ContainerHome = "/home/wai"

var containerNameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$`)

// CreateContainer creates, starts and provisions a hardened container; as
// with a session's, a failure because the files volume was removed under
// this process is tried once more.
func (b *Backend) CreateContainer(ctx context.Context, req backend.ContainerSpec) (backend.ContainerInfo, error) {
	info, err := b.createContainer(ctx, req)
	if err != nil && b.forgetLostFiles(err) {
		info, err = b.createContainer(ctx, req)
	}
	return info, err
}

func (b *Backend) createContainer(ctx context.Context, req backend.ContainerSpec) (backend.ContainerInfo, error) {
	const op = "containers.create"
	if req.Image == "" {
		req.Image = b.containersImage(ctx)
	}
	s, info, err := b.containerSpec(req)
	if err != nil {
		return backend.ContainerInfo{}, err
	}
	if err := b.checkJoinedNetwork(ctx, req, info.Network); err != nil {
		return backend.ContainerInfo{}, err
	}
	if s.SeccompProfilePath, err = writeSeccompProfile(b.seccompDir); err != nil {
		return info, err
	}
	if err := b.useFilesOnService(ctx, s); err != nil {
		return info, err
	}
	if err := b.mountWorkspaceVolume(ctx, req, s); err != nil {
		return info, err
	}
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return info, err
	}
	checked, err := b.guardImage(ctx, req.Owner, s.Image)
	if err != nil {
		return info, err
	}
	if ok, err := containers.Exists(cctx, s.Name, nil); err != nil {
		return info, b.svc.wrap(ctx, op, s.Name, err)
	} else if ok {
		return info, b.containerNameTaken(ctx, op, req.Owner, s.Name)
	}
	resp, err := containers.CreateWithSpec(cctx, s, nil)
	if err != nil {
		if strings.Contains(err.Error(), "image not known") || strings.Contains(err.Error(), "no such image") {
			return info, backend.Errorf(backend.ErrUnavailable, op, s.Image,
				"the image is not present on the Podman service; no registry is used for it: build or load it there (scripts/setup-podman.sh builds %s)", LocalImage)
		}
		return info, b.svc.wrap(ctx, op, s.Name, err)
	}
	info.ID = resp.ID
	if err := b.verifyImage(ctx, req.Owner, resp.ID, s.Image, checked); err != nil {
		return info, err
	}
	if err := containers.Start(cctx, resp.ID, nil); err != nil {
		b.removeQuiet(resp.ID)
		return info, startFailed(b, s.Name, err, ctx)
	}
	if err := b.provision(ctx, resp.ID, req.Files); err != nil {
		b.removeQuiet(resp.ID)
		return info, err
	}
	info.State, info.Running = "running", true
	if err := b.saveMeta(info); err != nil {
		b.log.Warn("runtime.podman.container_metadata", "container", info.Name, "error", err.Error())
	}
	b.log.InfoContext(ctx, "runtime.podman.container_created", "container", info.Name, "session", info.Session,
		"image", info.Image, "persistent", info.Persistent, "env_keys", strings.Join(info.EnvKeys, ","))
	return info, nil
}

// checkJoinedNetwork checks that the managed network a container joins
// ("" for none) is the owner's and fits the container.
func (b *Backend) checkJoinedNetwork(ctx context.Context, req backend.ContainerSpec, network string) error {
	const op = "containers.create"
	if network == "" {
		return nil
	}
	n, err := b.lookupNetwork(ctx, op, backend.ContainerRef{Owner: req.Owner, Name: network})
	if err != nil {
		return err
	}
	// The network goes with its session; a container outliving it
	// would hold it (and lose its network at the next gc).
	if req.Persistent && !n.Persistent {
		return backend.Errorf(backend.ErrInvalid, op, network,
			"a persistent container needs a persistent network: create_network with persistent = true")
	}
	// netavark accepts the mapping and forwards nothing: refuse
	// rather than publish a port that never answers.
	if n.Internal && len(req.Ports) > 0 {
		return backend.Errorf(backend.ErrInvalid, op, network,
			"ports cannot be published from an internal network: drop the ports, or use a network with egress (containers.allow_network_egress)")
	}
	return nil
}

// Interface guards
var _ backend.Containers = (*Backend)(nil)
