//go:build linux

package agent

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"syscall"
	"time"

	"github.com/wai-dev/wai/internal/agentproto"
	"github.com/wai-dev/wai/internal/jobring"
)

// A job's directory (agentproto.JobDir/ID) holds job.json (jobRecord,
// written once the command runs), stdout and stderr (ring files) and
// status.json (jobEnd, written when the job ends).

var jobIDPattern = regexp.MustCompile(`^j[0-9a-f]{12}$`)

// jobRecord is job.json.
type jobRecord struct {
	agentproto.JobInfo
	Marker      string `json:"marker"`
	Budget      int    `json:"budget"`
	Supervisor  int    `json:"supervisor"`
	SupStart    uint64 `json:"supervisor_start"`
	Leader      int    `json:"leader"`
	LeaderStart uint64 `json:"leader_start"`
}

// jobEnd is status.json.
type jobEnd struct {
	State    string `json:"state"`
	ExitCode int    `json:"exit_code"`
	Signal   int    `json:"signal"`
	EndedNS  int64  `json:"ended_ns"`
}

// RunJob supervises the job of the base64 JSON spec: it starts the
// command in a session of its own, prints the job's JSON (a JobInfo) on
// out once it runs (or could not run), then keeps its output in ring files
// and records how it ended. It is started as a Podman exec of its own, so
// nothing but the container's end or a signal stops it.
func RunJob(specArg string, out io.Writer) error {
	var spec agentproto.JobSpec
	raw, err := base64.StdEncoding.DecodeString(specArg)
	if err == nil {
		err = json.Unmarshal(raw, &spec)
	}
	if err != nil || !jobIDPattern.MatchString(spec.ID) || len(spec.Argv) == 0 || spec.Budget <= 0 || spec.MaxRuntimeMS <= 0 {
		return fmt.Errorf("a malformed job spec (%v)", err)
	}
	dir := filepath.Join(agentproto.JobDir, spec.ID)
	if err := os.MkdirAll(agentproto.JobDir, 0o700); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	var outs [2]*jobring.Writer
	for i, name := range []string{"stdout", "stderr"} {
		if outs[i], err = jobring.Create(filepath.Join(dir, name), spec.Budget); err != nil {
			return err
		}
		defer outs[i].Close()
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	rec := jobRecord{JobInfo: agentproto.JobInfo{ID: spec.ID, Command: spec.Argv, Cwd: spec.Cwd, State: "running",
		StartedNS: time.Now().UnixNano(), MaxRuntimeMS: spec.MaxRuntimeMS},
		Marker: spec.Marker, Budget: spec.Budget, Supervisor: os.Getpid(), SupStart: startTime(os.Getpid())}
	c := &command{e: agentproto.Exec{Env: spec.Env, EnvMode: spec.EnvMode, Path: spec.Path, Marker: spec.Marker}}
	env := c.environ()
	path, err := lookPath(spec.Argv[0], env, spec.Cwd)
	var cmd *exec.Cmd
	if err == nil {
		cmd = &exec.Cmd{Path: path, Args: spec.Argv, Dir: spec.Cwd, Env: env, Stdout: outs[0], Stderr: outs[1],
			SysProcAttr: &syscall.SysProcAttr{Setsid: true},
			// A leftover holding the pipes must not hold up the record.
			WaitDelay: time.Duration(spec.GraceMS)*time.Millisecond + 2*time.Second}
		err = cmd.Start()
	}
	if err != nil {
		code := 126
		if !errors.Is(err, fs.ErrPermission) && cmd == nil {
			code = 127
		}
		fmt.Fprintf(outs[1], "wai-agent: %s: %v\n", spec.Argv[0], err)
		end := jobEnd{State: "exited", ExitCode: code, EndedNS: time.Now().UnixNano()}
		return announceJob(dir, out, rec, &end)
	}
	rec.Leader, rec.LeaderStart = cmd.Process.Pid, startTime(cmd.Process.Pid)
	if err := announceJob(dir, out, rec, nil); err != nil {
		_ = syscall.Kill(-rec.Leader, syscall.SIGKILL)
		return err
	}
	end := superviseJob(spec, cmd, rec, stop)
	return writeJobFile(dir, "status.json", end)
}

// announceJob writes job.json (and status.json when the job already
// ended), prints the job on out and detaches from the exec's streams.
func announceJob(dir string, out io.Writer, rec jobRecord, end *jobEnd) error {
	if err := writeJobFile(dir, "job.json", rec); err != nil {
		return err
	}
	if end != nil {
		if err := writeJobFile(dir, "status.json", end); err != nil {
			return err
		}
	}
	info := rec.JobInfo
	if end != nil {
		info.State, info.ExitCode, info.Signal, info.EndedNS = end.State, end.ExitCode, end.Signal, end.EndedNS
	}
	b, _ := json.Marshal(info)
	_, err := fmt.Fprintf(out, "%s\n", b)
	// The host reads that one line and drops the exec's connection:
	// nothing more is written to it.
	if null, nerr := os.OpenFile(os.DevNull, os.O_RDWR, 0); nerr == nil {
		_ = syscall.Dup2(int(null.Fd()), 1)
		_ = syscall.Dup2(int(null.Fd()), 2)
		null.Close()
	}
	return err
}

// superviseJob waits for the command's end, its max runtime or a stop
// signal; on the last two it kills the tree (SIGTERM, the grace,
// SIGKILL). What the job left behind goes with it.
func superviseJob(spec agentproto.JobSpec, cmd *exec.Cmd, rec jobRecord, stop <-chan os.Signal) jobEnd {
	// The orphan rule stays off: orphans of the agent's commands are not
	// this job's to kill.
	ts := treeSpec{root: rec.Leader, marker: spec.Marker, others: func() map[string]bool { return nil }}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	timer := time.NewTimer(time.Duration(spec.MaxRuntimeMS) * time.Millisecond)
	defer timer.Stop()
	end := jobEnd{State: "exited"}
	grace := time.Duration(spec.GraceMS) * time.Millisecond
	select {
	case <-done:
		_, _ = killTree(ts, 0)
	case <-timer.C:
		end.State = "timed_out"
		_, end.Signal = killTree(ts, grace)
		<-done
	case <-stop:
		end.State = "cancelled"
		_, end.Signal = killTree(ts, grace)
		<-done
	}
	end.ExitCode = exitCode(cmd.ProcessState)
	if end.State == "timed_out" {
		end.ExitCode = 124
	}
	if end.State == "cancelled" && end.Signal == 0 {
		end.Signal = int(syscall.SIGTERM)
	}
	end.EndedNS = time.Now().UnixNano()
	return end
}

// writeJobFile replaces dir/name atomically: a reader sees none or all.
func writeJobFile(dir, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}
