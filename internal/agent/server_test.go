//go:build linux

package agent

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/internal/agentproto"
)

// host is the test's end of a connection to a Server running in-process.
type host struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *agentproto.Writer
	r    *agentproto.Reader
	done chan error
}

func startServer(t *testing.T, versions []int) (*host, agentproto.Frame) {
	t.Helper()
	return startServerIn(t, "", versions)
}

// startServerIn runs a Server in-process, its file operations confined to
// root ("" for none), and shakes hands offering versions; the frame is
// its answer.
func startServerIn(t *testing.T, root string, versions []int) (*host, agentproto.Frame) {
	t.Helper()
	toAgent, agentIn := io.Pipe()
	agentOut, fromAgent := io.Pipe()
	h := &host{t: t, in: agentIn, out: agentproto.NewWriter(agentIn),
		r: agentproto.NewReader(agentOut, agentproto.MaxAgentFrame), done: make(chan error, 1)}
	s := NewServer(toAgent, fromAgent, io.Discard)
	s.FSRoot = root
	go func() {
		err := s.Serve()
		fromAgent.Close()
		h.done <- err
	}()
	t.Cleanup(func() { agentIn.Close(); <-h.done })
	if err := h.out.WriteJSON(agentproto.TypeHello, 0, agentproto.Hello{Versions: versions}); err != nil {
		t.Fatal(err)
	}
	f, err := h.r.Read()
	if err != nil {
		t.Fatalf("hello: %v", err)
	}
	return h, f
}

// run sends one Exec and collects its frames until Exit.
func (h *host) run(id uint32, e agentproto.Exec) (stdout, stderr string, exit agentproto.Exit, started bool) {
	h.t.Helper()
	if e.TimeoutMS == 0 {
		e.TimeoutMS = 30_000
	}
	if e.Cwd == "" {
		e.Cwd = "/"
	}
	if e.Marker == "" {
		e.Marker = fmt.Sprintf("WAI_EXEC=test%d", rand.Uint64())
	}
	if err := h.out.WriteJSON(agentproto.TypeExec, id, e); err != nil {
		h.t.Fatal(err)
	}
	var o, er strings.Builder
	for {
		f, err := h.r.Read()
		if err != nil {
			h.t.Fatalf("reading frames: %v", err)
		}
		if f.ID != id {
			h.t.Fatalf("frame %s for id %d, want %d", f.Type, f.ID, id)
		}
		switch f.Type {
		case agentproto.TypeStarted:
			started = true
		case agentproto.TypeStdout:
			o.Write(f.Payload)
		case agentproto.TypeStderr:
			er.Write(f.Payload)
		case agentproto.TypeExit:
			if err := agentproto.Decode(f.Payload, &exit); err != nil {
				h.t.Fatal(err)
			}
			return o.String(), er.String(), exit, started
		default:
			h.t.Fatalf("unexpected %s frame", f.Type)
		}
	}
}

func TestHelloAndExit(t *testing.T) {
	h, f := startServer(t, []int{agentproto.Version})
	var hello agentproto.Hello
	if f.Type != agentproto.TypeHello || agentproto.Decode(f.Payload, &hello) != nil || hello.Version != agentproto.Version || hello.PID != os.Getpid() {
		t.Fatalf("hello answer: %s %s", f.Type, f.Payload)
	}
	out, errOut, exit, started := h.run(1, agentproto.Exec{Argv: []string{"/bin/sh", "-c", "echo out; echo err >&2; cat; exit 3"}, Stdin: []byte("in\n")})
	if out != "out\nin\n" || errOut != "err\n" || exit.Code != 3 || !started || exit.TimedOut {
		t.Errorf("got stdout %q stderr %q exit %+v started %v", out, errOut, exit, started)
	}
	_, errOut, exit, _ = h.run(2, agentproto.Exec{Argv: []string{"no-such-command-xyz"}})
	if exit.Code != 127 || !strings.Contains(errOut, "not found") {
		t.Errorf("missing command: exit %d stderr %q, want 127 and a complaint", exit.Code, errOut)
	}
	out, _, exit, _ = h.run(3, agentproto.Exec{Argv: []string{"/bin/sh"}, Script: []byte("echo script $0\n")})
	if exit.Code != 0 || !strings.HasPrefix(out, "script /") {
		t.Errorf("script: exit %d stdout %q", exit.Code, out)
	}
}

func TestEnvModes(t *testing.T) {
	h, _ := startServer(t, []int{agentproto.Version})
	t.Setenv("WAI_AGENT_TEST_INHERITED", "yes")
	out, _, _, _ := h.run(1, agentproto.Exec{Argv: []string{"/usr/bin/env"}, Env: map[string]string{"A": "1"}, Marker: "WAI_EXEC=m1"})
	for _, want := range []string{"A=1\n", "WAI_EXEC=m1\n", "WAI_AGENT_TEST_INHERITED=yes\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("extend: env output lacks %q:\n%s", want, out)
		}
	}
	out, _, _, _ = h.run(2, agentproto.Exec{Argv: []string{"env"}, Env: map[string]string{"B": "2"}, EnvMode: agentproto.EnvReplace, Path: "/usr/bin:/bin"})
	if got := strings.Fields(out); len(got) != 2 || !strings.Contains(out, "B=2") || !strings.Contains(out, "PATH=/usr/bin:/bin") {
		t.Errorf("replace: env %q, want only PATH and B", out)
	}
}

// The timeout kills the whole tree, including a child that ignores
// SIGTERM and one that left the command's session, found by its marker.
func TestTimeoutKillsTree(t *testing.T) {
	h, _ := startServer(t, []int{agentproto.Version})
	m := fmt.Sprintf("91.%09d", rand.IntN(1_000_000_000))
	marker := fmt.Sprintf("WAI_EXEC=t%d", rand.Uint64())
	start := time.Now()
	_, _, exit, _ := h.run(1, agentproto.Exec{Argv: []string{"/bin/sh", "-c",
		"trap '' TERM; sleep " + m + " & setsid sleep " + m + " & sleep " + m},
		TimeoutMS: 300, GraceMS: 300, Marker: marker})
	if !exit.TimedOut || exit.Signal == 0 || time.Since(start) > 20*time.Second {
		t.Errorf("exit %+v after %s, want timed out with a signal", exit, time.Since(start))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := withMarker(m)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes outlived the timeout: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// withMarker lists live processes whose command line holds m.
func withMarker(m string) []int {
	var pids []int
	for _, p := range scan() {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.pid))
		if strings.Contains(string(b), m) {
			pids = append(pids, p.pid)
		}
	}
	return pids
}

func TestCancelAndLeftovers(t *testing.T) {
	h, _ := startServer(t, []int{agentproto.Version})
	m := fmt.Sprintf("91.%09d", rand.IntN(1_000_000_000))
	// A background child is killed when its command exits, and does not
	// hold the call up although it keeps the output pipes open.
	start := time.Now()
	out, _, exit, _ := h.run(1, agentproto.Exec{Argv: []string{"/bin/sh", "-c", "sleep " + m + " & echo done"}})
	if exit.Code != 0 || out != "done\n" || time.Since(start) > 10*time.Second || !strings.HasPrefix(exit.Killed, "kill") {
		t.Errorf("background child: exit %+v stdout %q after %s", exit, out, time.Since(start))
	}
	if left := withMarker(m); len(left) > 0 {
		t.Errorf("the background child outlived its command: %v", left)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = h.out.WriteJSON(agentproto.TypeCancel, 2, agentproto.Cancel{GraceMS: 0})
	}()
	_, _, exit, _ = h.run(2, agentproto.Exec{Argv: []string{"sleep", m}})
	if !exit.Cancelled || exit.Code != 128+9 {
		t.Errorf("cancelled: %+v, want cancelled and killed by SIGKILL", exit)
	}
}

func TestProtocolErrors(t *testing.T) {
	h, f := startServer(t, []int{99})
	if f.Type != agentproto.TypeError {
		t.Errorf("unknown version: answer %s, want error", f.Type)
	}
	if err := <-h.done; err == nil {
		t.Errorf("unknown version: Serve returned nil")
	}
	h.done <- nil // for the cleanup
	h, _ = startServer(t, []int{agentproto.Version})
	if err := h.out.Write(agentproto.Type(77), 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-h.done; !errors.Is(err, agentproto.ErrMalformed) {
		t.Errorf("unknown frame type: Serve returned %v, want ErrMalformed", err)
	}
	h.done <- nil
}

// Output still in the pipes when the drain's bound passes is sent, not
// dropped: on a loaded machine the reading goroutine may not have run
// yet. A zero bound makes that likelier (the tree kill before the drain
// usually gives the readers time; pipedrain's own test pins the rest).
func TestOutputKeptPastTheDrainBound(t *testing.T) {
	saved := drainWait
	drainWait = 0
	t.Cleanup(func() { drainWait = saved })
	h, _ := startServer(t, []int{agentproto.Version})
	for i := range 20 {
		out, errOut, exit, _ := h.run(uint32(i+1), agentproto.Exec{Argv: []string{"/bin/sh", "-c", "echo out; echo err >&2"}})
		if out != "out\n" || errOut != "err\n" || exit.Code != 0 {
			t.Fatalf("run %d: stdout %q stderr %q exit %+v: output in the pipes was lost", i, out, errOut, exit)
		}
	}
}
