//go:build linux && (amd64 || arm64)

package host

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/jobring"
)

// Jobs live under the state directory, in @jobs/SESSION/ID, outside every
// workspace root: a command cannot write its job's results by writing
// into the workspace. The host backend is no sandbox, though: a command
// running as the same user can write anywhere that user can, these files
// included.

// jobRecord is job.json: what StartJob knows of a job.
type jobRecord struct {
	ID          string        `json:"id"`
	Command     []string      `json:"command"`
	Cwd         string        `json:"cwd"`
	Started     time.Time     `json:"started"`
	MaxRuntime  time.Duration `json:"max_runtime"`
	Supervisor  int           `json:"supervisor"`
	SupStart    uint64        `json:"supervisor_start"`
	Leader      int           `json:"leader"`
	LeaderStart uint64        `json:"leader_start"`
	Marker      string        `json:"marker"`
	Budget      int           `json:"budget"`
}

// jobBudget is the ring size per stream: a job's output is read in
// several polls, so it keeps more than one command result holds.
func (b *Backend) jobBudget() int { return 4 * b.limits.MaxOutputBytes }

func (b *Backend) jobsDir(session string) string {
	return filepath.Join(filepath.Dir(b.records.dir), "@jobs", session)
}

var jobIDPattern = regexp.MustCompile(`^j[0-9a-f]{12}$`)

// StartJob starts req under a detached supervisor and returns once the
// command runs.
func (w *Workspace) StartJob(ctx context.Context, req backend.JobRequest) (backend.JobInfo, error) {
	const op = "job.start"
	req, err := w.b.limits.CheckJob(op, req)
	if err != nil {
		return backend.JobInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return backend.JobInfo{}, err
	}
	done, err := w.begin(op)
	if err != nil {
		return backend.JobInfo{}, err
	}
	defer done()
	dir, err := w.fs.Resolve(req.Cwd)
	if err != nil {
		return backend.JobInfo{}, cwdError(op, req.Cwd, err)
	}
	argv := req.Command()
	if req.Shell != "" {
		argv = []string{w.b.cfg.Shell, "-c", req.Shell}
	}
	env := w.shell.environ(req.Env, req.EnvMode)
	marker := newSecret()
	env = append(env, markerVar+"="+marker)
	rec := jobRecord{ID: "j" + newSecret()[:12], Command: argv, Cwd: dir, MaxRuntime: req.MaxRuntime,
		Marker: marker, Budget: w.b.jobBudget()}
	jdir := filepath.Join(w.b.jobsDir(w.session), rec.ID)
	if err := os.MkdirAll(jdir, 0o700); err != nil {
		return backend.JobInfo{}, backend.Errorf(backend.ErrUnavailable, op, "", "cannot create the job directory: %v", err)
	}
	path, lerr := lookPath(argv[0], pathOf(env), dir)
	if lerr != nil {
		return w.notStarted(rec, jdir, lerr)
	}
	spec := jobSpec{Path: path, Argv: argv, Dir: dir, Env: env, Marker: marker, MaxRuntime: req.MaxRuntime,
		Grace: time.Duration(w.b.cfg.KillGrace), Budget: rec.Budget}
	if err := writeJSON(filepath.Join(jdir, "spec.json"), spec); err != nil {
		return backend.JobInfo{}, backend.Errorf(backend.ErrUnavailable, op, "", "cannot write the job spec: %v", err)
	}
	if err := w.b.launch(jdir, &rec); err != nil {
		_ = os.RemoveAll(jdir)
		return backend.JobInfo{}, backend.Errorf(backend.ErrUnavailable, op, argv[0], "cannot start the job's supervisor: %v", err)
	}
	return w.b.jobInfo(jdir, rec), nil
}

// launch starts the supervisor of jdir and waits for it to say the
// command runs; it fills in and writes rec.
func (b *Backend) launch(jdir string, rec *jobRecord) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	r, wr, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	c := &exec.Cmd{Path: self, Args: []string{self}, Env: []string{supervisorEnv + "=" + jdir}, Dir: "/",
		ExtraFiles: []*os.File{wr}, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	err = c.Start()
	wr.Close()
	if err != nil {
		return err
	}
	go func() { _ = c.Wait() }() // reaps it while this process lives
	rec.Supervisor = c.Process.Pid
	rec.SupStart, _ = startTime(c.Process.Pid)
	rec.Started = time.Now().UTC()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		_ = c.Process.Kill()
		return fmt.Errorf("the supervisor said nothing: %v", err)
	}
	if msg, ok := strings.CutPrefix(line, "error "); ok {
		return errors.New(strings.TrimSpace(msg))
	}
	f := strings.Fields(line)
	if len(f) == 2 {
		rec.Leader, _ = strconv.Atoi(f[0])
		rec.LeaderStart, _ = strconv.ParseUint(f[1], 10, 64)
	}
	return writeJSON(filepath.Join(jdir, "job.json"), rec)
}

// notStarted records a job whose command could not be found or run.
func (w *Workspace) notStarted(rec jobRecord, jdir string, err error) (backend.JobInfo, error) {
	code, msg := 127, "command not found"
	if !errors.Is(err, os.ErrNotExist) {
		code, msg = 126, "cannot execute: "+err.Error()
	}
	rec.Started = time.Now().UTC()
	if rw, rerr := jobring.Create(filepath.Join(jdir, "stderr"), rec.Budget); rerr == nil {
		fmt.Fprintf(rw, "wai: %s: %s\n", rec.Command[0], msg)
		rw.Close()
	}
	if werr := writeJSON(filepath.Join(jdir, "job.json"), rec); werr != nil {
		return backend.JobInfo{}, backend.Errorf(backend.ErrUnavailable, "job.start", "", "cannot record the job: %v", werr)
	}
	writeStatus(jdir, jobStatus{State: backend.JobExited, ExitCode: code, Ended: rec.Started})
	return w.b.jobInfo(jdir, rec), nil
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// jobInfo reads how the job stands: its status file once it ended, else
// running while its supervisor lives, else lost.
func (b *Backend) jobInfo(jdir string, rec jobRecord) backend.JobInfo {
	info := backend.JobInfo{ID: rec.ID, Command: rec.Command, Cwd: rec.Cwd, State: backend.JobRunning,
		StartedAt: rec.Started, MaxRuntime: rec.MaxRuntime, Backend: "host"}
	var st jobStatus
	if bs, err := os.ReadFile(filepath.Join(jdir, "status.json")); err == nil && json.Unmarshal(bs, &st) == nil {
		info.State, info.ExitCode, info.Signal, info.EndedAt = st.State, st.ExitCode, st.Signal, st.Ended
		return info
	}
	if !alive(rec.Supervisor, rec.SupStart) {
		info.State, info.ExitCode, info.EndedAt = backend.JobLost, -1, time.Now().UTC()
	}
	return info
}

// alive reports whether pid still is the process that started at start.
func alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	s, ok := startTime(pid)
	return ok && s == start
}

func (w *Workspace) readJob(op, id string) (string, jobRecord, error) {
	if !jobIDPattern.MatchString(id) {
		return "", jobRecord{}, backend.Errorf(backend.ErrNotFound, op, id, "no such job (job ids look like j0123456789ab; list them with job_list)")
	}
	jdir := filepath.Join(w.b.jobsDir(w.session), id)
	var rec jobRecord
	b, err := os.ReadFile(filepath.Join(jdir, "job.json"))
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil {
		return "", jobRecord{}, backend.Errorf(backend.ErrNotFound, op, id, "no such job in this session (list them with job_list)")
	}
	return jdir, rec, nil
}

// JobStatus describes a job and returns its output from since on.
func (w *Workspace) JobStatus(ctx context.Context, id string, since backend.JobOffsets) (backend.JobStatus, error) {
	if err := ctx.Err(); err != nil {
		return backend.JobStatus{}, err
	}
	done, err := w.begin("job.status")
	if err != nil {
		return backend.JobStatus{}, err
	}
	defer done()
	jdir, rec, err := w.readJob("job.status", id)
	if err != nil {
		return backend.JobStatus{}, err
	}
	st := backend.JobStatus{JobInfo: w.b.jobInfo(jdir, rec)}
	max := w.b.limits.MaxOutputBytes
	st.Stdout = readRing(filepath.Join(jdir, "stdout"), rec.Budget, since.Stdout, max)
	st.Stderr = readRing(filepath.Join(jdir, "stderr"), rec.Budget, since.Stderr, max)
	return st, nil
}

// CancelJob stops a running job's supervisor, which kills the job's tree,
// and waits for it to record the end.
func (w *Workspace) CancelJob(ctx context.Context, id string) (backend.JobInfo, error) {
	done, err := w.begin("job.cancel")
	if err != nil {
		return backend.JobInfo{}, err
	}
	defer done()
	jdir, rec, err := w.readJob("job.cancel", id)
	if err != nil {
		return backend.JobInfo{}, err
	}
	return w.b.cancel(ctx, jdir, rec)
}

func (b *Backend) cancel(ctx context.Context, jdir string, rec jobRecord) (backend.JobInfo, error) {
	info := b.jobInfo(jdir, rec)
	if info.State != backend.JobRunning {
		return info, nil
	}
	if alive(rec.Supervisor, rec.SupStart) { // never a reused pid
		_ = syscall.Kill(rec.Supervisor, syscall.SIGTERM)
	}
	wait := time.NewTimer(time.Duration(b.cfg.KillGrace) + 10*time.Second)
	defer wait.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if info = b.jobInfo(jdir, rec); info.State != backend.JobRunning {
			break
		}
		select {
		case <-tick.C:
			continue
		case <-ctx.Done():
		case <-wait.C:
		}
		break
	}
	if info.State == backend.JobRunning || info.State == backend.JobLost {
		// The supervisor did not answer: kill what it ran ourselves.
		if alive(rec.Supervisor, rec.SupStart) {
			_ = syscall.Kill(rec.Supervisor, syscall.SIGKILL)
		}
		if alive(rec.Leader, rec.LeaderStart) {
			_ = syscall.Kill(-rec.Leader, syscall.SIGKILL)
		}
		sweep(markerVar+"="+rec.Marker, rec.Leader, rec.LeaderStart, syscall.SIGKILL)
		writeStatus(jdir, jobStatus{State: backend.JobCancelled, ExitCode: 128 + int(syscall.SIGKILL),
			Signal: int(syscall.SIGKILL), Ended: time.Now().UTC()})
		info = b.jobInfo(jdir, rec)
	}
	return info, ctx.Err()
}

// ListJobs lists the session's jobs, oldest first.
func (w *Workspace) ListJobs(ctx context.Context) ([]backend.JobInfo, error) {
	done, err := w.begin("job.list")
	if err != nil {
		return nil, err
	}
	defer done()
	return w.b.listJobs(ctx, w.session)
}

func (b *Backend) listJobs(ctx context.Context, session string) ([]backend.JobInfo, error) {
	ents, err := os.ReadDir(b.jobsDir(session))
	if errors.Is(err, os.ErrNotExist) {
		return []backend.JobInfo{}, nil
	}
	if err != nil {
		return nil, backend.Errorf(backend.ErrUnavailable, "job.list", session, "cannot read the jobs: %v", err)
	}
	out := []backend.JobInfo{}
	for _, e := range ents {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var rec jobRecord
		jdir := filepath.Join(b.jobsDir(session), e.Name())
		bs, err := os.ReadFile(filepath.Join(jdir, "job.json"))
		if err != nil || json.Unmarshal(bs, &rec) != nil {
			continue // being started
		}
		out = append(out, b.jobInfo(jdir, rec))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StartedAt.Before(out[j].StartedAt) })
	return out, nil
}

// endJobs kills every job of a session that ends and removes their files.
func (b *Backend) endJobs(session string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(b.cfg.KillGrace)+15*time.Second)
	defer cancel()
	jobs, _ := b.listJobs(ctx, session)
	for _, j := range jobs {
		jdir := filepath.Join(b.jobsDir(session), j.ID)
		var rec jobRecord
		if bs, err := os.ReadFile(filepath.Join(jdir, "job.json")); err == nil && json.Unmarshal(bs, &rec) == nil {
			_, _ = b.cancel(ctx, jdir, rec)
		}
	}
	if err := os.RemoveAll(b.jobsDir(session)); err != nil {
		return backend.Errorf(backend.ErrUnavailable, "close", session, "cannot remove the session's jobs: %v", err)
	}
	return nil
}

// Interface guards
var _ backend.JobRunner = (*Workspace)(nil)
