//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"

	"github.com/containers/podman/v5/libpod/define"
	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
)

// StopContainer stops a managed container and keeps it: its files stay
// for StartContainer (destroy is what removes them).
func (b *Backend) StopContainer(ctx context.Context, ref backend.ContainerRef, force bool) (backend.ContainerInfo, error) {
	const op = "containers.stop"
	data, err := b.lookup(ctx, op, ref)
	if err != nil {
		return backend.ContainerInfo{}, err
	}
	if data.State != nil && data.State.Running {
		cctx, err := b.svc.ctx(ctx)
		if err != nil {
			return backend.ContainerInfo{}, err
		}
		// As destroy's graceful stop: a service in it may shut down first.
		timeout := uint(10)
		if force {
			timeout = 0
		}
		if err := containers.Stop(cctx, data.ID, new(containers.StopOptions).WithTimeout(timeout).WithIgnore(true)); err != nil && !notFound(err) {
			return backend.ContainerInfo{}, b.svc.wrap(ctx, op, ref.Name, err)
		}
		b.log.InfoContext(ctx, "runtime.podman.container_stopped", "container", data.Name, "session", ref.Owner.Session, "force", force)
	}
	return b.stateNow(ctx, op, ref)
}

// StartContainer starts a stopped managed container again, as it was
// made: same image, mounts, network and limits, and the files it had.
func (b *Backend) StartContainer(ctx context.Context, ref backend.ContainerRef) (backend.ContainerInfo, error) {
	const op = "containers.start"
	data, err := b.lookup(ctx, op, ref)
	if err != nil {
		return backend.ContainerInfo{}, err
	}
	if data.State == nil || !data.State.Running {
		cctx, err := b.svc.ctx(ctx)
		if err != nil {
			return backend.ContainerInfo{}, err
		}
		if err := containers.Start(cctx, data.ID, nil); err != nil {
			return backend.ContainerInfo{}, startFailed(b, data.Name, err, ctx)
		}
		b.log.InfoContext(ctx, "runtime.podman.container_started", "container", data.Name, "session", ref.Owner.Session)
	}
	return b.stateNow(ctx, op, ref)
}

// stateNow describes ref's container as it is after a start or stop.
func (b *Backend) stateNow(ctx context.Context, op string, ref backend.ContainerRef) (backend.ContainerInfo, error) {
	data, err := b.lookup(ctx, op, ref)
	if err != nil {
		return backend.ContainerInfo{}, err
	}
	return b.describe(data), nil
}

// describe is the info of an inspected managed container.
func (b *Backend) describe(data *define.InspectContainerData) backend.ContainerInfo {
	info := infoFromLabels(data.Name, data.ID, data.ImageName, data.Config.Labels)
	if data.State != nil {
		info.State, info.Running = data.State.Status, data.State.Running
	}
	b.mergeMeta(&info)
	return info
}
