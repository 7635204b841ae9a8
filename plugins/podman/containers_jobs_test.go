//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// pollJob polls a job until done(status) holds, failing after a minute.
func pollJob(t *testing.T, jr backend.JobRunner, id string, since backend.JobOffsets, done func(backend.JobStatus) bool) backend.JobStatus {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := jr.JobStatus(t.Context(), id, since)
		if err != nil {
			t.Fatalf("JobStatus: %v", err)
		}
		if done(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: condition not met in a minute: %+v", id, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Background jobs in a managed container: polled while running (partial
// output), after completion (the rest, the exit code), cancelled (the
// whole tree dies, seen with ps in the container); gone with the
// container.
func TestContainerJobs(t *testing.T) {
	t.Parallel()
	b, _, owner := containerTest(t, nil)
	ctx := t.Context()
	info := create(t, b, backend.ContainerSpec{Owner: owner, Name: "wai-jobs-" + newID()[:8], Network: "none", Workdir: "/srv"})
	ref := backend.ContainerRef{Owner: owner, Name: info.Name}
	if res := cexec(t, b, ref, "test -x /.wai-agent && ! touch /.wai-agent 2>/dev/null && echo ro-agent"); !strings.Contains(res.Stdout, "ro-agent") {
		t.Errorf("wai-agent is not mounted read-only in the managed container: %+v", res)
	}
	jr, err := b.ContainerJobs(ctx, ref)
	if err != nil {
		t.Fatalf("ContainerJobs: %v", err)
	}
	// A gate, not a sleep: under load the poll below may come late.
	j, err := jr.StartJob(ctx, backend.JobRequest{Shell: "echo start; pwd; while [ ! -e /tmp/gate ]; do sleep 0.05; done; echo done; echo oops >&2; exit 3"})
	if err != nil || j.State != backend.JobRunning || j.Cwd != "/srv" {
		t.Fatalf("StartJob: %+v, %v; want a running job in the container's workdir /srv", j, err)
	}
	st := pollJob(t, jr, j.ID, backend.JobOffsets{}, func(s backend.JobStatus) bool { return strings.Contains(s.Stdout.Text, "/srv\n") })
	if !st.Running() || strings.Contains(st.Stdout.Text, "done") || st.Stdout.Text != "start\n/srv\n" {
		t.Errorf("poll while running: %+v; want running with the partial output start, /srv", st)
	}
	cexec(t, b, ref, "touch /tmp/gate")
	since := backend.JobOffsets{Stdout: st.Stdout.Next, Stderr: st.Stderr.Next}
	end := pollJob(t, jr, j.ID, since, func(s backend.JobStatus) bool { return !s.Running() })
	if end.State != backend.JobExited || end.ExitCode != 3 || end.Stdout.Text != "done\n" || end.Stderr.Text != "oops\n" || end.EndedAt.IsZero() {
		t.Errorf("poll after completion from the last offsets: %+v; want exited 3, stdout done, stderr oops", end)
	}
	if full, err := jr.JobStatus(ctx, j.ID, backend.JobOffsets{}); err != nil || full.Stdout.Text != "start\n/srv\ndone\n" {
		t.Errorf("the whole output after completion: %+v, %v", full, err)
	}
	if _, err := jr.StartJob(ctx, backend.JobRequest{Shell: "true", Cwd: "relative"}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("a relative cwd: %v, want ErrInvalid", err)
	}
	if _, err := jr.JobStatus(ctx, "j0123456789ab", backend.JobOffsets{}); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("an unknown job: %v, want ErrNotFound", err)
	}
	// Cancel: the job's children die with it.
	k, err := jr.StartJob(ctx, backend.JobRequest{Shell: "sleep 301 & sleep 302 & wait"})
	if err != nil {
		t.Fatal(err)
	}
	ps := func() string { return cexec(t, b, ref, "ps -eo args").Stdout }
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(ps(), "sleep 302"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the job's children never showed up in ps:\n%s", ps())
		}
	}
	c, err := jr.CancelJob(ctx, k.ID)
	if err != nil || c.State != backend.JobCancelled {
		t.Fatalf("CancelJob: %+v, %v", c, err)
	}
	if out := ps(); strings.Contains(out, "sleep 30") {
		t.Errorf("processes of the cancelled job are left:\n%s", out)
	}
	if again, err := jr.CancelJob(ctx, j.ID); err != nil || again.State != backend.JobExited {
		t.Errorf("cancelling an ended job: %+v, %v; want it left exited", again, err)
	}
	// The max runtime kills a job like a command at its timeout.
	slow, err := jr.StartJob(ctx, backend.JobRequest{Shell: "sleep 303", MaxRuntime: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if st := pollJob(t, jr, slow.ID, backend.JobOffsets{}, func(s backend.JobStatus) bool { return !s.Running() }); st.State != backend.JobTimedOut || st.ExitCode != backend.TimeoutExitCode {
		t.Errorf("a job past its max runtime: %+v, want timed_out with exit %d", st.JobInfo, backend.TimeoutExitCode)
	}
	if out := ps(); strings.Contains(out, "sleep 303") {
		t.Errorf("the timed-out job's process is left:\n%s", out)
	}
	// Destroyed: its jobs and the host's records of them are gone.
	records := (&Workspace{b: b, name: info.Name, managed: true}).deadlinesDir()
	if _, err := os.Stat(records); err != nil {
		t.Errorf("no host records of the jobs' deadlines: %v", err)
	}
	if _, err := b.DestroyContainer(ctx, ref, true); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ContainerJobs(ctx, ref); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("jobs of a destroyed container: %v, want ErrNotFound", err)
	}
	if _, err := jr.JobStatus(ctx, j.ID, backend.JobOffsets{}); err == nil {
		t.Errorf("a job of a destroyed container was still polled")
	}
	if _, err := os.Stat(records); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the deadline records outlived the container: %v", err)
	}
}

// A container made without the agent (an older wai, agent = false) says
// how to get jobs; a mount over the agent's path is refused.
func TestContainerJobsNeedTheAgent(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	b, _, owner := containerTest(t, map[string]any{"allowed_host_roots": []string{root}})
	bin := b.agentBin
	b.agentBin = "" // as a backend with agent = false creates it
	info := create(t, b, backend.ContainerSpec{Owner: owner, Network: "none"})
	b.agentBin = bin
	_, err := b.ContainerJobs(context.Background(), backend.ContainerRef{Owner: owner, Name: info.Name})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "snapshot it, then restore") {
		t.Errorf("jobs in a container without wai-agent: %v, want ErrUnavailable saying to recreate it from a snapshot (its files kept)", err)
	}
	_, err = b.CreateContainer(context.Background(), backend.ContainerSpec{Owner: owner, Network: "none",
		Mounts: []backend.ContainerMount{{HostPath: root, ContainerPath: agentMountPath}}})
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "reserved for wai-agent") {
		t.Errorf("a mount over %s: %v, want ErrInvalid saying it is reserved", agentMountPath, err)
	}
}
