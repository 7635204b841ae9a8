//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
)

// RunningJobs lists the session's running background jobs without
// creating or starting its container (ListJobs would): none when no
// container runs. The kernel asks before it stops or idly releases the
// workspace, which would end them.
func (w *Workspace) RunningJobs(ctx context.Context) ([]backend.JobInfo, error) {
	const op = "job.list"
	if w.b.agentBin == "" || w.managed {
		return nil, nil
	}
	id, err := w.runningContainer(ctx, op)
	if err != nil || id == "" {
		return nil, err
	}
	var infos []agentproto.JobInfo
	err = w.b.jobQuery(ctx, id, op, "", 4<<20, &infos, "list")
	if errors.Is(err, errNoAgent) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []backend.JobInfo
	for _, ji := range infos {
		if ji.State != string(backend.JobRunning) {
			continue
		}
		info, err := w.b.jobInfo(op, ji)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// runningContainer is the id of the session's container if it runs: this
// process's, else the one of its name a kept session's earlier process
// left (a Stop removes that one too), else "".
func (w *Workspace) runningContainer(ctx context.Context, op string) (string, error) {
	if st := w.cur.Load(); st != nil {
		return st.id, nil
	}
	cctx, err := w.b.svc.ctx(ctx)
	if err != nil {
		return "", err
	}
	data, err := containers.Inspect(cctx, w.name, nil)
	switch {
	case notFound(err):
		return "", nil
	case err != nil:
		return "", w.b.svc.wrap(ctx, op, w.name, err)
	case data.State == nil || !data.State.Running:
		return "", nil
	}
	return data.ID, nil
}

// Interface guards
var _ backend.RunningJobLister = (*Workspace)(nil)
