//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// openAgentWS opens a workspace whose commands go through the agent and
// checks that they do.
func openAgentWS(t *testing.T, extra map[string]any) (*Backend, *Workspace) {
	t.Helper()
	b := newTestBackend(t, backend.DefaultLimits(), extra)
	ws, err := b.Open(t.Context(), backend.WorkspaceSpec{Session: session("agent")})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = ws.Close(bg) })
	return b, ws.(*Workspace)
}

func TestAgentRunsCommands(t *testing.T) {
	t.Parallel()
	_, w := openAgentWS(t, nil)
	res, err := w.Shell().Execute(t.Context(), backend.ExecRequest{Shell: "echo out; echo err >&2; exit 3", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if res.Stdout != "out\n" || res.Stderr != "err\n" || res.ExitCode != 3 {
		t.Fatalf("got stdout %q stderr %q exit %d, want out, err, 3", res.Stdout, res.Stderr, res.ExitCode)
	}
	st := w.cur.Load()
	st.agent.mu.Lock()
	conn := st.agent.conn
	st.agent.mu.Unlock()
	if conn == nil || !conn.alive() || conn.pid <= 1 {
		t.Fatalf("the command did not run through a live agent (conn %v)", conn)
	}
	var chunks []string
	res, err = w.Shell().Execute(t.Context(), backend.ExecRequest{Shell: "echo a; sleep 0.3; echo b", Timeout: 30 * time.Second,
		Output: func(s backend.Stream, p []byte) { chunks = append(chunks, s.String()+":"+string(p)) }})
	if err != nil || res.Stdout != "a\nb\n" {
		t.Fatalf("Execute with Output: %v, stdout %q", err, res.Stdout)
	}
	if strings.Join(chunks, "") != "stdout:a\nstdout:b\n" {
		t.Errorf("live output %q, want the two lines as two chunks", chunks)
	}
}

// liveAgent returns the workspace's running agent after a command made
// sure there is one.
func liveAgent(t *testing.T, w *Workspace) (*ctrState, *agentConn) {
	t.Helper()
	if _, err := w.Shell().Execute(t.Context(), backend.ExecRequest{Argv: []string{"true"}, Timeout: 30 * time.Second}); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	st := w.cur.Load()
	st.agent.mu.Lock()
	defer st.agent.mu.Unlock()
	if st.agent.conn == nil || !st.agent.conn.alive() {
		t.Fatal("no live agent after a command")
	}
	return st, st.agent.conn
}

// signalAgentAfter sends the agent sig from outside it after d, as a
// command of the sandbox could. The test must check the returned
// function before it ends: it waits for the signal and reports a failure.
func signalAgentAfter(t *testing.T, d time.Duration, w *Workspace, st *ctrState, pid int, sig string) (check func()) {
	done := make(chan error, 1)
	time.AfterFunc(d, func() {
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		code, out, err := w.b.execSimple(ctx, st.id, []string{"/bin/sh", "-c", "kill -" + sig + " " + strconv.Itoa(pid)}, nil)
		if err == nil && code != 0 {
			err = fmt.Errorf("exit %d: %s", code, out)
		}
		done <- err
	})
	return func() {
		t.Helper()
		if err := <-done; err != nil {
			t.Errorf("kill -%s the agent: %v", sig, err)
		}
	}
}

// markedProcesses lists the container's processes whose command line
// holds m, seen from outside the agent.
func markedProcesses(t *testing.T, w *Workspace, st *ctrState, m string) string {
	ctx, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	re := strings.ReplaceAll(m, ".", "[.]")
	_, out, err := w.b.execSimple(ctx, st.id, []string{"/bin/sh", "-c",
		"for f in $(grep -l -a -e '" + re + "' /proc/[0-9]*/cmdline 2>/dev/null); do tr '\\0' ' ' <$f; echo; done"}, nil)
	if err != nil {
		t.Fatalf("scanning processes: %v", err)
	}
	return strings.TrimSpace(out)
}

// The agent killed under a running command: the call fails (the command's
// outcome is unknown) rather than report something untrue, the command's
// tree is killed from outside, and the next command runs through a new
// agent.
func TestAgentKilledMidCommand(t *testing.T) {
	t.Parallel()
	_, w := openAgentWS(t, nil)
	st, conn := liveAgent(t, w)
	m := fmt.Sprintf("91.%09d", rand.IntN(1_000_000_000))
	signalled := signalAgentAfter(t, time.Second, w, st, conn.pid, "KILL")
	start := time.Now()
	res, err := w.Shell().Execute(t.Context(), backend.ExecRequest{Shell: "sleep " + m + " & sleep " + m, Timeout: 120 * time.Second})
	signalled()
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Fatalf("command under a killed agent: err %v (result %+v), want ErrUnavailable", err, res)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("the call returned after %s, want soon after the agent died", d)
	}
	if left := markedProcesses(t, w, st, m); left != "" {
		t.Errorf("the command's processes outlived the call:\n%s", left)
	}
	res, err = w.Shell().Execute(t.Context(), backend.ExecRequest{Shell: "echo next", Timeout: 30 * time.Second})
	if err != nil || res.Stdout != "next\n" {
		t.Fatalf("next command: %v, stdout %q", err, res.Stdout)
	}
	_, conn2 := liveAgent(t, w)
	if conn2 == conn || conn2.pid == conn.pid {
		t.Errorf("the next command did not run through a new agent")
	}
}

// A wedged agent (stopped, so it neither answers nor dies): the host's own
// deadline ends the command, the kill from outside stops its tree, and the
// agent is replaced.
func TestAgentWedgedMidCommand(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.DefaultLimits(), nil)
	b.slack = time.Second // the host's deadline and cancel wait: 1 s past, not 5
	w := openTest(t, b, false)
	st, conn := liveAgent(t, w)
	m := fmt.Sprintf("91.%09d", rand.IntN(1_000_000_000))
	signalled := signalAgentAfter(t, 500*time.Millisecond, w, st, conn.pid, "STOP")
	res, err := w.Shell().Execute(t.Context(), backend.ExecRequest{Shell: "sleep " + m + " & sleep " + m, Timeout: 2 * time.Second})
	signalled()
	if err != nil {
		t.Fatalf("command under a wedged agent: %v", err)
	}
	if !res.TimedOut || res.ExitCode != backend.TimeoutExitCode || res.Signal == 0 {
		t.Errorf("timed_out %v exit %d signal %d, want a timeout with the signal that ended it", res.TimedOut, res.ExitCode, res.Signal)
	}
	if left := markedProcesses(t, w, st, m); left != "" {
		t.Errorf("the command's processes outlived the call:\n%s", left)
	}
	res, err = w.Shell().Execute(t.Context(), backend.ExecRequest{Shell: "echo next", Timeout: 30 * time.Second})
	if err != nil || res.Stdout != "next\n" {
		t.Fatalf("next command: %v, stdout %q", err, res.Stdout)
	}
	if _, conn2 := liveAgent(t, w); conn2 == conn {
		t.Errorf("the wedged agent is still in use")
	}
}

// An agent that cannot start (here: a binary that exits at once) leaves
// the session working on the Podman exec path.
func TestAgentBrokenFallsBack(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "wai-agent")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\necho broken >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, w := openAgentWS(t, map[string]any{"agent_path": bad})
	res, err := w.Shell().Execute(t.Context(), backend.ExecRequest{Shell: "echo fallback; exit 4", Timeout: 30 * time.Second})
	if err != nil || res.Stdout != "fallback\n" || res.ExitCode != 4 {
		t.Fatalf("command with a broken agent: %v, stdout %q exit %d", err, res.Stdout, res.ExitCode)
	}
	st := w.cur.Load()
	st.agent.mu.Lock()
	defer st.agent.mu.Unlock()
	if st.agent.conn != nil || st.agent.failures == 0 {
		t.Errorf("agent slot: conn %v, failures %d; want no agent and a failure counted", st.agent.conn, st.agent.failures)
	}
}

// An agent whose host lets go (a kept session's container outlives this
// process) reads the end of its input and exits: agents do not pile up in
// a container that many wai runs reattach to.
func TestAgentExitsWhenReleased(t *testing.T) {
	t.Parallel()
	_, w := openAgentWS(t, nil)
	st, conn := liveAgent(t, w)
	st.closeAgent()
	ctx, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	for deadline := time.Now().Add(20 * time.Second); ; {
		code, _, err := w.b.execSimple(ctx, st.id, []string{"/bin/sh", "-c", "test -d /proc/" + strconv.Itoa(conn.pid)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if code != 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent (pid %d) still runs 20 s after its connection closed", conn.pid)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Input too large for one frame to the agent takes the Podman exec path:
// the command still runs, and the agent stays.
func TestAgentLargeInputFallsBack(t *testing.T) {
	t.Parallel()
	l := backend.DefaultLimits()
	l.MaxStdinBytes = 20 << 20
	b := newTestBackend(t, l, nil)
	w := openTest(t, b, false)
	_, conn := liveAgent(t, w)
	in := strings.Repeat("x", 13<<20)
	res, err := w.Shell().Execute(t.Context(), backend.ExecRequest{Shell: "wc -c", Stdin: in, Timeout: 2 * time.Minute})
	if err != nil || strings.TrimSpace(res.Stdout) != strconv.Itoa(len(in)) {
		t.Fatalf("13 MiB of stdin: %v, stdout %q", err, res.Stdout)
	}
	if _, conn2 := liveAgent(t, w); conn2 != conn {
		t.Errorf("the agent was replaced after an input it could not take")
	}
}

// Output streams while the command runs, through the agent and on the
// Podman exec path: the command waits for a file that the test creates
// only once it has seen the first line live.
func TestAgentOutputIsLive(t *testing.T) {
	t.Parallel()
	for _, agent := range []bool{true, false} {
		t.Run(fmt.Sprint("agent=", agent), func(t *testing.T) {
			_, w := openAgentWS(t, map[string]any{"agent": agent})
			outputIsLive(t, w)
		})
	}
}

func outputIsLive(t *testing.T, w *Workspace) {
	seen := make(chan struct{})
	var once sync.Once
	go func() {
		select {
		case <-seen:
			_ = os.WriteFile(filepath.Join(w.Dir(), "go"), nil, 0o644)
		case <-t.Context().Done():
		}
	}()
	res, err := w.Shell().Execute(t.Context(), backend.ExecRequest{
		Shell:   "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second",
		Timeout: 60 * time.Second,
		Output: func(s backend.Stream, p []byte) {
			if s == backend.Stdout && strings.Contains(string(p), "first") {
				once.Do(func() { close(seen) })
			}
		}})
	if err != nil || res.TimedOut || res.Stdout != "first\nsecond\n" {
		t.Fatalf("timed_out %v stdout %q err %v: the first line did not reach Output while the command ran", res.TimedOut, res.Stdout, err)
	}
}
