//go:build linux

package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/wai-dev/wai/internal/agentproto"
	"github.com/wai-dev/wai/internal/jobring"
)

// maxListedJobs bounds `job list`: the host caps running jobs per
// session far below it.
const maxListedJobs = 1000

// ErrNoJob means the job does not exist (wai-agent exits 3, which the host
// reads as not found).
var ErrNoJob = errors.New("no such job")

// JobCommand serves `wai-agent job status|cancel|list ...`, printing one
// JSON document on out.
func JobCommand(args []string, out io.Writer) error {
	var v any
	var err error
	switch {
	case len(args) == 4 && args[0] == "status":
		v, err = jobStatusCmd(args[1], args[2], args[3])
	case len(args) == 3 && args[0] == "cancel":
		v, err = jobCancelCmd(args[1], args[2], "cancelled")
	case len(args) == 4 && args[0] == "cancel" && args[3] == "timed_out":
		v, err = jobCancelCmd(args[1], args[2], "timed_out")
	case len(args) == 1 && args[0] == "list":
		v, err = jobList()
	default:
		return fmt.Errorf("usage: job status ID STDOUT_OFFSET,STDERR_OFFSET MAX | job cancel ID GRACE_MS [timed_out] | job list")
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(v)
}

// loadJob reads job id's record and how it stands: its status once it
// ended, running while its supervisor lives, else lost.
func loadJob(id string) (string, jobRecord, agentproto.JobInfo, error) {
	if !jobIDPattern.MatchString(id) {
		return "", jobRecord{}, agentproto.JobInfo{}, ErrNoJob
	}
	dir := filepath.Join(agentproto.JobDir, id)
	var rec jobRecord
	b, err := os.ReadFile(filepath.Join(dir, "job.json"))
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil || rec.ID != id {
		return "", jobRecord{}, agentproto.JobInfo{}, ErrNoJob
	}
	info := rec.JobInfo
	var end jobEnd
	if b, err := os.ReadFile(filepath.Join(dir, "status.json")); err == nil && json.Unmarshal(b, &end) == nil {
		info.State, info.ExitCode, info.Signal, info.EndedNS = end.State, end.ExitCode, end.Signal, end.EndedNS
		return dir, rec, info, nil
	}
	info.State = "running"
	if rec.Supervisor <= 0 || startTime(rec.Supervisor) != rec.SupStart {
		info.State, info.ExitCode, info.EndedNS = "lost", -1, time.Now().UnixNano()
	}
	return dir, rec, info, nil
}

func jobStatusCmd(id, offsets, maxArg string) (agentproto.JobStatus, error) {
	var since [2]int64
	if _, err := fmt.Sscanf(offsets, "%d,%d", &since[0], &since[1]); err != nil {
		return agentproto.JobStatus{}, fmt.Errorf("bad offsets %q", offsets)
	}
	max, err := strconv.Atoi(maxArg)
	if err != nil || max <= 0 {
		return agentproto.JobStatus{}, fmt.Errorf("bad max %q", maxArg)
	}
	dir, rec, info, err := loadJob(id)
	if err != nil {
		return agentproto.JobStatus{}, err
	}
	st := agentproto.JobStatus{Job: info}
	st.Stdout = window(filepath.Join(dir, "stdout"), rec.Budget, since[0], max)
	st.Stderr = window(filepath.Join(dir, "stderr"), rec.Budget, since[1], max)
	return st, nil
}

// window reads at most max bytes of a stream from since on: from the
// head, or from the tail (skipping what was dropped before it).
func window(path string, budget int, since int64, max int) agentproto.JobStream {
	head, tail, total := jobring.Read(path, budget)
	since = min(total, since)
	since = maxInt64(since, 0)
	tailStart := total - int64(len(tail))
	s := agentproto.JobStream{Total: total, Offset: since}
	var seg []byte
	switch h := int64(len(head)); {
	case since < h && tailStart == h:
		seg = append(append([]byte{}, head[since:]...), tail...)
	case since < h:
		seg = head[since:]
	default:
		if since < tailStart {
			s.Skipped, s.Offset = tailStart-since, tailStart
		}
		seg = tail[s.Offset-tailStart:]
	}
	s.Data = seg[:min(len(seg), max)]
	return s
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// jobCancelCmd stops a running job's supervisor, which kills the job's
// tree, and waits for it to record the end; a supervisor that does not
// (dead, or stopped) has the tree killed here, by marker and session, and
// the job recorded as state (the host's overdue check says timed_out).
func jobCancelCmd(id, graceArg, state string) (agentproto.JobInfo, error) {
	graceMS, err := strconv.ParseInt(graceArg, 10, 64)
	if err != nil || graceMS < 0 {
		return agentproto.JobInfo{}, fmt.Errorf("bad grace %q", graceArg)
	}
	dir, rec, info, err := loadJob(id)
	if err != nil || (info.State != "running" && info.State != "lost") {
		return info, err
	}
	grace := time.Duration(graceMS) * time.Millisecond
	if info.State == "running" {
		_ = syscall.Kill(rec.Supervisor, syscall.SIGTERM)
		deadline := time.Now().Add(grace + 5*time.Second)
		for time.Now().Before(deadline) {
			if _, _, info, _ = loadJob(id); info.State != "running" && info.State != "lost" {
				return info, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		if startTime(rec.Supervisor) == rec.SupStart {
			_ = syscall.Kill(rec.Supervisor, syscall.SIGKILL)
		}
	}
	ts := treeSpec{root: rec.Leader, marker: rec.Marker, others: func() map[string]bool { return nil }}
	if rec.Leader <= 0 || startTime(rec.Leader) != rec.LeaderStart {
		ts.root = -1 // a reused pid is not the job's
	}
	_, sig := killTree(ts, 0)
	end := jobEnd{State: state, ExitCode: 128 + int(syscall.SIGKILL), Signal: max(sig, int(syscall.SIGKILL)), EndedNS: time.Now().UnixNano()}
	if state == "timed_out" {
		end.ExitCode = 124
	}
	if err := writeJobFile(dir, "status.json", end); err != nil {
		return info, err
	}
	_, _, info, err = loadJob(id)
	return info, err
}

func jobList() ([]agentproto.JobInfo, error) {
	ents, err := os.ReadDir(agentproto.JobDir)
	if errors.Is(err, os.ErrNotExist) {
		return []agentproto.JobInfo{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []agentproto.JobInfo{}
	for _, e := range ents {
		if len(out) == maxListedJobs {
			break
		}
		if _, _, info, err := loadJob(e.Name()); err == nil {
			out = append(out, info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StartedNS < out[j].StartedNS })
	return out, nil
}
