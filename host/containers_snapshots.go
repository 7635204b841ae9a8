package host

import (
	"context"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// snapshotOps are the operations snapshotOp runs.
var snapshotOps = map[string]bool{"snapshot": true, "restore": true, "list_snapshots": true, "delete_snapshot": true}

// restoreImage shows a policy the image a restore creates from, as a
// create's image: a policy judging images must not see "" (the default)
// for it. A snapshot that cannot be resolved leaves it empty; the
// restore then fails on it after the policy.
func restoreImage(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, req ContainerRequest, chk *ContainerCheck) {
	sn, ok := c.(backend.ContainerSnapshots)
	if req.Operation != "restore" || !ok || req.Snapshot == "" || req.Image != "" {
		return
	}
	if image, err := sn.SnapshotImage(ctx, owner, req.Snapshot); err == nil {
		chk.Image = image
	}
}

// snapshotOp runs the snapshot operations on a backend with
// backend.ContainerSnapshots. restore is a create from the snapshot's
// image: it passed the policy chain as one (containers.restore is gated
// as containers.create is), and takes create's parameters.
func (s *Session) snapshotOp(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, req ContainerRequest) (ContainerResponse, error) {
	resp := ContainerResponse{Operation: req.Operation}
	op := ActionContainersPrefix + req.Operation
	sn, ok := c.(backend.ContainerSnapshots)
	if !ok {
		return resp, backend.Errorf(backend.ErrUnavailable, op, "", "the session's backend does not take snapshots of containers: use backend = \"podman\"")
	}
	needSnapshot := func() error {
		if req.Snapshot == "" {
			return backend.Errorf(backend.ErrInvalid, op, "", "give snapshot: the name of one of your snapshots (list_snapshots shows them)")
		}
		return nil
	}
	switch req.Operation {
	case "snapshot":
		if req.Container == "" {
			return resp, backend.Errorf(backend.ErrInvalid, op, "", "give container: the container to snapshot (list shows them); snapshot names the snapshot (optional)")
		}
		info, err := sn.SnapshotContainer(ctx, backend.ContainerRef{Owner: owner, Name: req.Container}, req.Snapshot)
		if err != nil {
			return resp, err
		}
		resp.Snapshot = &info
		if len(info.StrippedEnv) > 0 {
			resp.Notes = append(resp.Notes, "the values of "+strings.Join(info.StrippedEnv, ", ")+
				" were not saved in the snapshot (credentials stay out of images): restore passes them again as create does (env, env_passthrough)")
		}
		return resp, nil
	case "list_snapshots":
		ls, err := sn.ListSnapshots(ctx, owner)
		resp.Snapshots = ls
		return resp, err
	case "delete_snapshot":
		if err := needSnapshot(); err != nil {
			return resp, err
		}
		info, err := sn.DeleteSnapshot(ctx, owner, req.Snapshot)
		if err != nil {
			return resp, err
		}
		resp.Snapshot = &info
		return resp, nil
	}
	// restore
	if err := needSnapshot(); err != nil {
		return resp, err
	}
	if req.Image != "" {
		return resp, backend.Errorf(backend.ErrInvalid, op, req.Image, "restore creates from the snapshot's image: drop image")
	}
	image, err := sn.SnapshotImage(ctx, owner, req.Snapshot)
	if err != nil {
		return resp, err
	}
	req.Image = image
	return s.createContainer(ctx, c, owner, req)
}
