//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wai-dev/wai/internal/agentproto"
)

// TestJobsUnknownAreNotNone: a container whose agent does not answer (here:
// the query's context is already done, as a timeout under load leaves it)
// counts as running jobs, so the idle reaper and the sweep leave it; one
// made without the agent plainly has none, so it is still swept.
func TestJobsUnknownAreNotNone(t *testing.T) {
	t.Parallel()
	b, w, rec := recordedSession(t, nil, false)
	sh(t, w, "true")
	st := w.cur.Load()
	done, cancel := context.WithCancel(bg)
	cancel()
	if n, err := runningJobs(done, b.svc, b.cfg.User, st.id); err == nil {
		t.Fatalf("runningJobs without an answer = %d, nil; want an error", n)
	}
	if !w.jobsRun(done, st) || rec.count("runtime.podman.jobs_unknown") != 1 {
		t.Errorf("jobsRun without an answer is false (events %s); want true: the reaper must not kill jobs it could not see", rec)
	}

	nb, nw, _ := recordedSession(t, map[string]any{"agent": false}, false)
	sh(t, nw, "true")
	var infos []agentproto.JobInfo
	if err := queryJobs(bg, nb.svc, nb.cfg.User, nw.cur.Load().id, "job.list", "", 1<<20, time.Minute, &infos, "list"); !errors.Is(err, errNoAgent) {
		t.Errorf("the job query in a container without the agent: %v, want errNoAgent", err)
	}
	if n, err := runningJobs(bg, nb.svc, nb.cfg.User, nw.cur.Load().id); n != 0 || err != nil {
		t.Errorf("runningJobs in a container without the agent = %d, %v; want 0, nil", n, err)
	}
}
