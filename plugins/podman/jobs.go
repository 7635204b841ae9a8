//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
)

// Background jobs run inside the session's container under `wai-agent job
// run`, a Podman exec of their own (not a request to the session's agent
// process, which ends with the connection of the wai process that started
// it). The supervisor keeps the job's files under /tmp/.wai-jobs/ID (the
// container's tmpfs, outside /workspace); status, cancel and list are
// short execs of the agent binary printing JSON, read with hard caps and
// checked field by field: they are the sandbox's word about its own job.
// A kept session's container, and its jobs, outlive this process; closing
// a session that is not kept, or removing it, removes the container and
// every job in it.

var jobIDPattern = regexp.MustCompile(`^j[0-9a-f]{12}$`)

// jobBudget is the ring size per stream, as on the host backend: a job's
// output is read in several polls.
func (b *Backend) jobBudget() int { return 4 * b.limits.MaxOutputBytes }

// StartJob starts req under a supervisor in the container and returns once
// the command runs.
func (w *Workspace) StartJob(ctx context.Context, req backend.JobRequest) (backend.JobInfo, error) {
	const op = "job.start"
	req, err := w.b.limits.CheckJob(op, req)
	if err != nil {
		return backend.JobInfo{}, err
	}
	if err := checkReserved(op, req.Env); err != nil {
		return backend.JobInfo{}, err
	}
	cwd, err := w.jobCwd(ctx, op, req.Cwd)
	if be := (*backend.Error)(nil); errors.As(err, &be) && be.Kind == backend.ErrInvalid {
		return backend.JobInfo{}, backend.Errorf(backend.ErrInvalid, op, req.Cwd, "bad cwd: %s", be.Msg)
	}
	if err != nil {
		return backend.JobInfo{}, err
	}
	st, done, err := w.jobsReady(ctx, op)
	if err != nil {
		return backend.JobInfo{}, err
	}
	defer done()
	secret := newSecret()
	spec := agentproto.JobSpec{ID: "j" + newSecret()[:12], Argv: req.Command(), Cwd: cwd, Env: req.Env,
		Marker: markerVar + "=" + secret, MaxRuntimeMS: req.MaxRuntime.Milliseconds(),
		GraceMS: w.b.grace().Milliseconds(), Budget: w.b.jobBudget()}
	if req.EnvMode == backend.EnvReplace {
		spec.EnvMode, spec.Path = agentproto.EnvReplace, st.path()
	}
	raw, _ := json.Marshal(spec)
	argv := []string{agentMountPath, "job", "run", base64.StdEncoding.EncodeToString(raw)}
	// The supervisor carries the marker too: it is a ppid-0 process, whose
	// marker protects the job's processes from the leftover sweeps of the
	// session's commands.
	started := time.Now()
	out, err := w.b.jobStart(ctx, st.id, argv, []string{spec.Marker})
	if err != nil {
		return backend.JobInfo{}, err
	}
	var info agentproto.JobInfo
	if err := json.Unmarshal(out, &info); err != nil || info.ID != spec.ID {
		return backend.JobInfo{}, backend.Errorf(backend.ErrUnavailable, op, spec.ID, "the job's supervisor gave no valid answer (%v)", err)
	}
	// The host's own clock from before the start, not the record's.
	if err := w.recordJobDeadline(spec.ID, started.Add(req.MaxRuntime)); err != nil {
		return backend.JobInfo{}, backend.Errorf(backend.ErrUnavailable, op, spec.ID, "cannot record the job's deadline on the host: %v", err)
	}
	return w.b.jobInfo(op, info)
}

// jobsReady enters the workspace and returns its running container; jobs
// need the agent binary in it (ContainerJobs checks a managed container
// has it).
func (w *Workspace) jobsReady(ctx context.Context, op string) (*ctrState, func(), error) {
	if w.b.agentBin == "" {
		return nil, nil, backend.Errorf(backend.ErrUnavailable, op, "",
			"background jobs need wai-agent in the container: build wai with `make build` (which embeds it) and do not set agent = false in [backends.podman]")
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	done, err := w.enter(op)
	if err != nil {
		return nil, nil, err
	}
	st, err := w.ensure(ctx)
	if err != nil {
		done()
		return nil, nil, err
	}
	return st, done, nil
}

// jobReady is jobsReady for a call about one job, whose id it checks
// first: an id that is not one is the caller's mistake, whatever the
// workspace's state.
func (w *Workspace) jobReady(ctx context.Context, op, id string) (*ctrState, func(), error) {
	if err := checkJobID(op, id, w.managed); err != nil {
		return nil, nil, err
	}
	return w.jobsReady(ctx, op)
}

// JobStatus describes a job and returns its output from since on.
func (w *Workspace) JobStatus(ctx context.Context, id string, since backend.JobOffsets) (backend.JobStatus, error) {
	const op = "job.status"
	st, done, err := w.jobReady(ctx, op, id)
	if err != nil {
		return backend.JobStatus{}, err
	}
	defer done()
	max := w.b.limits.MaxOutputBytes
	offsets := fmt.Sprintf("%d,%d", max64(since.Stdout, 0), max64(since.Stderr, 0))
	var js agentproto.JobStatus
	var info backend.JobInfo
	for try := 0; ; try++ {
		// Two streams of at most max bytes each, base64 in JSON, and the rest.
		if err := w.jobQuery(ctx, st.id, op, id, 3*max+64<<10, &js, "status", id, offsets, strconv.Itoa(max)); err != nil {
			return backend.JobStatus{}, err
		}
		info, err = w.b.jobInfo(op, js.Job)
		if err != nil || info.ID != id {
			return backend.JobStatus{}, backend.Errorf(backend.ErrUnavailable, op, id, "the job's record in the container is not valid")
		}
		if try > 0 || !w.overdue(info) {
			break
		}
		if _, err := w.cancelOverdue(ctx, st, info); err != nil {
			return backend.JobStatus{}, err
		}
	}
	out := backend.JobStatus{JobInfo: info}
	if out.Stdout, err = jobOutput(js.Stdout, since.Stdout, max); err == nil {
		out.Stderr, err = jobOutput(js.Stderr, since.Stderr, max)
	}
	if err != nil {
		return backend.JobStatus{}, backend.Errorf(backend.ErrUnavailable, op, id, "the job's output in the container is not valid: %v", err)
	}
	return out, nil
}

// CancelJob kills a running job's tree and returns once it is dead.
func (w *Workspace) CancelJob(ctx context.Context, id string) (backend.JobInfo, error) {
	const op = "job.cancel"
	st, done, err := w.jobReady(ctx, op, id)
	if err != nil {
		return backend.JobInfo{}, err
	}
	defer done()
	var info agentproto.JobInfo
	if err := w.jobQuery(ctx, st.id, op, id, 64<<10, &info, "cancel", id, strconv.FormatInt(w.b.grace().Milliseconds(), 10)); err != nil {
		return backend.JobInfo{}, err
	}
	return w.b.jobInfo(op, info)
}

// ListJobs lists the session's jobs, oldest first.
func (w *Workspace) ListJobs(ctx context.Context) ([]backend.JobInfo, error) {
	const op = "job.list"
	st, done, err := w.jobsReady(ctx, op)
	if err != nil {
		return nil, err
	}
	defer done()
	var infos []agentproto.JobInfo
	if err := w.b.jobQuery(ctx, st.id, op, "", 4<<20, &infos, "list"); err != nil {
		return nil, err
	}
	out := make([]backend.JobInfo, 0, len(infos))
	for _, ji := range infos {
		info, err := w.b.jobInfo(op, ji)
		if err == nil && w.overdue(info) {
			info, err = w.cancelOverdue(ctx, st, info)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

func checkJobID(op, id string, managed bool) error {
	if !jobIDPattern.MatchString(id) {
		return backend.Errorf(backend.ErrNotFound, op, id, "no such job (job ids look like j0123456789ab; %s)", jobListHint(managed))
	}
	return nil
}

// jobQuery is the backend's jobQuery about job id; an id the container
// does not know says what lists the jobs here.
func (w *Workspace) jobQuery(ctx context.Context, ctrID, op, id string, max int, v any, args ...string) error {
	err := w.b.jobQuery(ctx, ctrID, op, id, max, v, args...)
	if w.managed && errors.Is(err, backend.ErrNotFound) {
		return backend.Errorf(backend.ErrNotFound, op, id, "no such job in container %s (%s)", w.name, jobListHint(true))
	}
	return err
}

// jobListHint names what lists the jobs: job_list lists only a session's
// own, never a managed container's.
func jobListHint(managed bool) string {
	if managed {
		return "the containers tool's status lists a container's jobs, exec_background returns each id"
	}
	return "list them with job_list"
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// Interface guards
var _ backend.JobRunner = (*Workspace)(nil)

// jobsRun reports whether the session's container runs background jobs:
// the idle reaper leaves such a session alone (a running job is use). A
// container that cannot say counts as running them until it can: the
// reaper asks again next tick, and removing it would kill what it could
// not see.
func (w *Workspace) jobsRun(ctx context.Context, st *ctrState) bool {
	if w.b.agentBin == "" || w.managed {
		return false
	}
	n, err := runningJobs(ctx, w.b.svc, w.b.cfg.User, st.id)
	if err != nil {
		w.b.event(ctx, "runtime.podman.jobs_unknown", w, "container_id", short(st.id), "error", err.Error())
		return true
	}
	return n > 0
}

// overdueSlack is how long past its max runtime (and the kill's grace) a
// job may still be reported running before the host stops it itself: the
// supervisor in the container enforces the runtime, but it is the
// sandbox's process (a command can stop it with SIGSTOP).
const overdueSlack = 10 * time.Second

// overdue judges by the host's record of the job's deadline when there is
// one (jobs_deadline.go), else by the container's record.
func (w *Workspace) overdue(info backend.JobInfo) bool {
	if !info.Running() {
		return false
	}
	deadline, ok := w.jobDeadline(info.ID)
	if !ok {
		deadline = info.StartedAt.Add(info.MaxRuntime)
	}
	return time.Now().After(deadline.Add(w.b.grace() + w.b.slackOr(overdueSlack)))
}

// cancelOverdue stops a job its supervisor left running past its max
// runtime: the cancel kills a supervisor that does not answer, and the
// job's tree by its marker and session, and records it timed out.
func (w *Workspace) cancelOverdue(ctx context.Context, st *ctrState, info backend.JobInfo) (backend.JobInfo, error) {
	w.b.event(ctx, "runtime.podman.job_overdue", w, "job", info.ID, "max_runtime", info.MaxRuntime)
	var ji agentproto.JobInfo
	if err := w.b.jobQuery(ctx, st.id, "job.status", info.ID, 64<<10, &ji, "cancel", info.ID, "0", "timed_out"); err != nil {
		return backend.JobInfo{}, err
	}
	return w.b.jobInfo("job.status", ji)
}
