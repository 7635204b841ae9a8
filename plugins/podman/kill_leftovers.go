//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
)

// baseProcesses are the tasks of an idle container: the init and the
// sleeper it keeps alive, one thread each.
const baseProcesses = 2

// stopLeftovers ends what a command that exited by itself left running
// (background jobs, daemons): they end with their command unless the
// session is closed first. The common case, nothing left, costs one
// stats call to the service and no exec.
func (w *Workspace) stopLeftovers(st *ctrState, id, secret string, root execRoot, count <-chan taskCountResult) killReport {
	c := <-count
	n, ok := c.n, c.ok
	if ok && n <= baseProcesses {
		return killReport{outcome: "none"}
	}
	if !ok {
		n = -1
	}
	return w.killTree(st, id, secret, root, 0, n)
}

type taskCountResult struct {
	n  int
	ok bool
}

// startTaskCount reads taskCount in the background, so the call overlaps
// the others made after a command ends.
func (b *Backend) startTaskCount(ctrID string) <-chan taskCountResult {
	ch := make(chan taskCountResult, 1)
	go func() {
		n, ok := b.taskCount(ctrID)
		ch <- taskCountResult{n, ok}
	}()
	return ch
}

// taskCount is the container's pids cgroup count (processes and threads,
// what pids_limit caps), as the service reads it from outside: no exec, so
// it works at the pids limit, where listing the processes does not keep up.
func (b *Backend) taskCount(ctrID string) (int, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return -1, false
	}
	ch, err := containers.Stats(cctx, []string{ctrID}, new(containers.StatsOptions).WithStream(false))
	if err != nil {
		return -1, false
	}
	n, ok := -1, false
	for rep := range ch {
		if rep.Error == nil && len(rep.Stats) == 1 && !ok {
			n, ok = int(rep.Stats[0].PIDs), true
		}
	}
	return n, ok
}
