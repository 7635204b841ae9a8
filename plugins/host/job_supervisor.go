//go:build linux && (amd64 || arm64)

package host

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/jobring"
)

// A job runs under a supervisor: this same program, started again with
// supervisorEnv naming the job's directory, detached in a session of its
// own so that it outlives the process that started it (a kept session's
// jobs outlive wai exec and MCP connections). The supervisor starts the
// command as the leader of a process group, copies its output into the
// ring files, kills the whole tree at the job's max runtime or on SIGTERM
// (cancel), and writes how the job ended to status.json. Any process that
// opens the session reads the job's files; none needs the process that
// started it.

// supervisorEnv names the job directory of a supervisor process.
const supervisorEnv = "WAI_HOST_JOB_SUPERVISOR"

func init() {
	if dir := os.Getenv(supervisorEnv); dir != "" {
		os.Exit(supervise(dir))
	}
}

// jobSpec is what the supervisor runs, written by StartJob.
type jobSpec struct {
	Path       string        `json:"path"`
	Argv       []string      `json:"argv"`
	Dir        string        `json:"dir"`
	Env        []string      `json:"env"`
	Marker     string        `json:"marker"`
	MaxRuntime time.Duration `json:"max_runtime"`
	Grace      time.Duration `json:"grace"`
	Budget     int           `json:"budget"` // ring bytes per stream
}

// jobStatus is how a job ended, written by the supervisor.
type jobStatus struct {
	State    backend.JobState `json:"state"`
	ExitCode int              `json:"exit_code"`
	Signal   int              `json:"signal"`
	Ended    time.Time        `json:"ended"`
}

// supervise runs the job of dir; its exit status matters to nobody.
func supervise(dir string) int {
	ready := os.NewFile(3, "ready") // StartJob reads "pid start\n" or "error …\n"
	var spec jobSpec
	b, err := os.ReadFile(filepath.Join(dir, "spec.json"))
	if err == nil {
		err = json.Unmarshal(b, &spec)
	}
	if err != nil {
		fmt.Fprintf(ready, "error reading the job spec: %v\n", err)
		return 1
	}
	var outs [2]*jobring.Writer
	for i, name := range []string{"stdout", "stderr"} {
		if outs[i], err = jobring.Create(filepath.Join(dir, name), spec.Budget); err != nil {
			fmt.Fprintf(ready, "error creating %s: %v\n", name, err)
			return 1
		}
		defer outs[i].Close()
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	c := &exec.Cmd{Path: spec.Path, Args: spec.Argv, Dir: spec.Dir, Env: spec.Env,
		Stdout: outs[0], Stderr: outs[1], SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
		// A process that left the group and the marker behind may hold
		// the output pipes: stop reading rather than never record the end.
		WaitDelay: spec.Grace + 2*time.Second}
	if err := c.Start(); err != nil {
		fmt.Fprintf(outs[1], "wai: %s: %v\n", spec.Argv[0], unwrapPathError(err))
		writeStatus(dir, jobStatus{State: backend.JobExited, ExitCode: 126, Ended: time.Now().UTC()})
		fmt.Fprintf(ready, "0 0\n")
		ready.Close()
		return 0
	}
	pid := c.Process.Pid
	leaderStart, _ := startTime(pid)
	fmt.Fprintf(ready, "%d %d\n", pid, leaderStart)
	ready.Close()

	state, sent := awaitJob(spec, pid, leaderStart, stop)
	_ = c.Wait()
	st := jobStatus{State: state, Ended: time.Now().UTC()}
	if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok {
		if ws.Signaled() {
			st.Signal, st.ExitCode = int(ws.Signal()), 128+int(ws.Signal())
		} else {
			st.ExitCode = ws.ExitStatus()
		}
	}
	if state != backend.JobExited && st.Signal == 0 {
		st.Signal = int(sent)
	}
	if state == backend.JobTimedOut {
		st.ExitCode = backend.TimeoutExitCode
	}
	writeStatus(dir, st)
	return 0
}

// awaitJob waits for the job's leader to exit, its max runtime or a stop
// signal; on the last two it kills the group (SIGTERM, the grace, SIGKILL).
// Then what the job left behind goes with it, in its group or out of it
// (found by the marker). It returns how the job ended and the last signal
// sent, 0 when none was needed.
func awaitJob(spec jobSpec, pid int, leaderStart uint64, stop <-chan os.Signal) (backend.JobState, syscall.Signal) {
	exited := make(chan struct{})
	go func() { waitExited(pid); close(exited) }()
	timer := time.NewTimer(spec.MaxRuntime)
	defer timer.Stop()
	state := backend.JobExited
	select {
	case <-exited:
	case <-timer.C:
		state = backend.JobTimedOut
	case <-stop:
		state = backend.JobCancelled
	}
	marker := markerVar + "=" + spec.Marker
	sent := syscall.Signal(0)
	if state != backend.JobExited {
		sent = syscall.SIGTERM
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		sweep(marker, pid, leaderStart, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(spec.Grace):
			sent = syscall.SIGKILL
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-exited
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	sweep(marker, pid, leaderStart, syscall.SIGKILL)
	return state, sent
}

// writeStatus replaces status.json atomically: a reader sees none or all.
func writeStatus(dir string, st jobStatus) {
	b, _ := json.Marshal(st)
	tmp := filepath.Join(dir, ".status.tmp")
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, filepath.Join(dir, "status.json"))
	}
}
