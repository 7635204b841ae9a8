//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// marker is a sleep duration no other process uses, to find a test's
// processes in /proc.
func marker() string { return fmt.Sprintf("30%d.%06d", rand.IntN(9), rand.IntN(1e6)) }

// leftovers lists the processes in w's container whose command line holds m.
func leftovers(t *testing.T, w *Workspace, m string) string {
	t.Helper()
	re := strings.ReplaceAll(m, ".", "[.]")
	res := sh(t, w, `for f in $(grep -l -a -e '`+re+`' /proc/[0-9]*/cmdline 2>/dev/null); do tr '\0' ' ' <"$f"; echo; done; true`)
	return strings.TrimSpace(res.Stdout)
}

// TestTimeoutKillsEveryProcess: whatever a command does to get away —
// background, setsid, a cleared environment, double forks — nothing of it
// survives its timeout, in either env mode.
func TestTimeoutKillsEveryProcess(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	w := openTest(t, b, false)
	m := marker()
	cases := []struct {
		name  string
		shell string
		mode  backend.EnvMode
	}{
		{"sleep 300 & sleep 300", "sleep " + m + " & sleep " + m, ""},
		{"setsid child", "setsid sleep " + m + " & sleep " + m, ""},
		{"double fork, setsid, env -i", "(env -i /usr/bin/setsid /bin/sleep " + m + " &); sleep " + m, ""},
		{"nohup'd subshell ignoring TERM", "(trap '' TERM; sleep " + m + ") & sleep " + m, ""},
		{"env replace, setsid and env -i", "(env -i /usr/bin/setsid /bin/sleep " + m + " &); setsid sleep " + m + " & sleep " + m, backend.EnvReplace},
	}
	for _, c := range cases {
		start := time.Now()
		res := run(t, w, backend.ExecRequest{Shell: c.shell, Timeout: time.Second, EnvMode: c.mode})
		took := time.Since(start)
		if !res.TimedOut || res.ExitCode != backend.TimeoutExitCode || res.Signal == 0 {
			t.Errorf("%s: timed_out %v exit %d signal %d, want a timeout (124) with its signal", c.name, res.TimedOut, res.ExitCode, res.Signal)
		}
		// A hang guard, not a speed test: on a loaded machine one exec
		// takes seconds, and the kill is one or two of them.
		if took > time.Minute {
			t.Errorf("%s: returned after %s with a 1 s timeout", c.name, took)
		}
		if left := leftovers(t, w, m); left != "" {
			t.Errorf("%s: processes survived the timeout:\n%s", c.name, left)
		}
		t.Logf("%s: returned after %s, signal %d", c.name, took.Round(time.Millisecond), res.Signal)
	}
	// A concurrent, innocent command in the same container is untouched.
	innocent := marker()
	done := make(chan backend.ExecResult, 1)
	go func() {
		res, _ := w.Shell().Execute(bg, backend.ExecRequest{Shell: "sleep " + innocent + " & sleep 3; echo survived", Timeout: 20 * time.Second})
		done <- res
	}()
	time.Sleep(500 * time.Millisecond)
	run(t, w, backend.ExecRequest{Shell: "sleep " + m, Timeout: 500 * time.Millisecond})
	if res := <-done; res.Stdout != "survived\n" || res.ExitCode != 0 {
		t.Errorf("a concurrent command was hit by another's timeout: exit %d stdout %q", res.ExitCode, res.Stdout)
	}
}

// TestForkBombStopped: the pids limit stops a fork bomb, the timeout ends
// it, and the workspace works afterwards.
func TestForkBombStopped(t *testing.T) {
	t.Parallel()
	for _, agent := range []bool{true, false} {
		t.Run(map[bool]string{true: "agent", false: "noagent"}[agent], func(t *testing.T) {
			t.Parallel()
			forkBombStopped(t, agent)
		})
	}
}

func forkBombStopped(t *testing.T, agent bool) {
	_, w, rec := recordedSession(t, map[string]any{"agent": agent}, false)
	if _, err := w.FS().Write(bg, backend.WriteRequest{Path: "keep.txt", Content: "still here\n"}); err != nil {
		t.Fatal(err)
	}
	// The container's health check runs beside its first command: let it
	// pass before the bomb takes every pid.
	run(t, w, backend.ExecRequest{Argv: []string{"true"}})
	start := time.Now()
	res := run(t, w, backend.ExecRequest{Shell: "b() { b | b & }; b; sleep 60", Timeout: 3 * time.Second})
	took := time.Since(start)
	// The bomb may take the pids before its shell forks `sleep` (often
	// through the agent; on a loaded machine through Podman exec too):
	// the shell exits 2, and the bomb is killed as its leftovers. Either
	// way it ends, and a bomb left running would starve the next command.
	if !res.TimedOut && res.ExitCode == 0 || res.TimedOut && res.ExitCode != backend.TimeoutExitCode {
		t.Errorf("fork bomb: timed_out %v exit %d, want a timeout", res.TimedOut, res.ExitCode)
	}
	if took > 3*time.Minute { // a hang guard: the kill's bounds add up to well under this
		t.Errorf("fork bomb: took %s to stop", took)
	}
	t.Logf("fork bomb stopped after %s (events: %s); stderr %q", took.Round(time.Millisecond), rec, elide(res.Stderr))
	res = run(t, w, backend.ExecRequest{Shell: "cat keep.txt; n=$(ls /proc | grep -c '^[0-9]'); echo procs=$n; cat /sys/fs/cgroup/pids/pids.current 2>/dev/null || cat /sys/fs/cgroup/pids.current"})
	lines := strings.Split(res.Stdout, "\n")
	if res.ExitCode != 0 || lines[0] != "still here" {
		t.Fatalf("after the fork bomb: exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	t.Logf("after the fork bomb: %q", res.Stdout)
}

// TestOOMRecreates: a command over the memory limit is killed, the result
// says why, and the next command gets a fresh container.
func TestOOMRecreates(t *testing.T) {
	t.Parallel()
	_, w, rec := recordedSession(t, map[string]any{"memory": "256m"}, false)
	sh(t, w, "echo before >/tmp/mark")
	res := run(t, w, backend.ExecRequest{Argv: []string{"python3", "-c", "b = bytearray(1 << 30); print(len(b))"}})
	if res.Success() || res.ExitCode != 137 || res.Signal != 9 || !strings.Contains(res.Stderr, "out of memory") {
		t.Errorf("memory hog: exit %d signal %d stderr %q, want 137, SIGKILL and an out-of-memory note", res.ExitCode, res.Signal, res.Stderr)
	}
	res = sh(t, w, "cat /tmp/mark 2>/dev/null || echo fresh")
	if res.Stdout != "fresh\n" {
		t.Errorf("after the OOM kill the container was not recreated: /tmp/mark reads %q", res.Stdout)
	}
	if rec.count("runtime.podman.oom") != 1 || rec.count("runtime.podman.recreated_after_failure") != 1 {
		t.Errorf("events %s, want one oom and one recreated_after_failure", rec)
	}
}

// TestStress: goroutines exec'ing at once on one session and on several
// sessions; every result is its own.
func TestStress(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	ws := []*Workspace{openTest(t, b, false), openTest(t, b, false), openTest(t, b, false)}
	const perWS, rounds = 4, 3
	var wg sync.WaitGroup
	for i, w := range ws {
		for g := range perWS {
			wg.Go(func() {
				for r := range rounds {
					tok := fmt.Sprintf("ws%d-g%d-r%d", i, g, r)
					in := strings.Repeat(tok+"\n", 50)
					res, err := w.Shell().Execute(bg, backend.ExecRequest{
						Shell: `cat; echo "$TOK-err" >&2; echo "$TOK" >/tmp/$TOK; cat /tmp/$TOK`,
						Stdin: in, Env: map[string]string{"TOK": tok}})
					if err != nil {
						t.Errorf("%s: %v", tok, err)
						return
					}
					if res.Stdout != in+tok+"\n" || res.Stderr != tok+"-err\n" || res.ExitCode != 0 {
						t.Errorf("%s: exit %d stdout %q stderr %q: output mixed or lost", tok, res.ExitCode, elide(res.Stdout), res.Stderr)
					}
				}
			})
		}
	}
	wg.Wait()
}

// TestCancelKills: a cancelled context stops the command and its tree, and
// the call says why. The cancel comes once the command runs, however long
// starting it takes on a loaded machine (a cancel at a fixed 500 ms could
// land before the command had printed anything); a cancel that lands while
// it starts is TestCancelWhileStarting's.
func TestCancelKills(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	w := openTest(t, b, false)
	m := marker()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	type outcome struct {
		res backend.ExecResult
		err error
	}
	out := make(chan outcome, 1)
	go func() {
		// The timeout is far off: on a loaded machine the wait below can
		// outlast the default one.
		res, err := w.Shell().Execute(ctx, backend.ExecRequest{Shell: "echo started; sleep " + m + " & sleep " + m, Timeout: 10 * time.Minute})
		out <- outcome{res, err}
	}()
	waitUntil(t, "both sleeps run", func() bool { return sleepers(leftovers(t, w, m)) == 2 })
	cancel()
	cancelled := time.Now()
	got := <-out
	res, err := got.res, got.err
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v, want one wrapping context.Canceled", err)
	}
	if took := time.Since(cancelled); took > time.Minute || res.Stdout != "started\n" || res.Signal == 0 {
		t.Errorf("cancelled: returned %s after the cancel, stdout %q signal %d; want the output and the signal that ended it", took, res.Stdout, res.Signal)
	}
	if left := leftovers(t, w, m); left != "" {
		t.Errorf("processes survived the cancellation:\n%s", left)
	}
}

// TestCancelWhileStarting: a cancel at any moment of a command's start, the
// handshake with the service included, leaves nothing running: the start is
// seen through, then the command killed like any other.
func TestCancelWhileStarting(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	w := openTest(t, b, false)
	run(t, w, backend.ExecRequest{Argv: []string{"true"}}) // the container is up
	m := marker()
	for i := range 12 {
		ctx, cancel := context.WithCancel(bg)
		time.AfterFunc(time.Duration(i)*15*time.Millisecond, cancel)
		res, err := w.Shell().Execute(ctx, backend.ExecRequest{Shell: "sleep " + m + " & sleep " + m})
		cancel()
		if err == nil {
			t.Errorf("cancel after %d ms: no error, result %+v", i*15, res)
		}
		if left := leftovers(t, w, m); left != "" {
			t.Fatalf("cancel after %d ms: processes survived:\n%s", i*15, left)
		}
	}
}

func elide(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
