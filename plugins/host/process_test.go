//go:build linux && (amd64 || arm64)

package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
	"github.com/wai-dev/wai/internal/syncbuf"
)

// The issue's acceptance test, at the backend level: `wai exec --timeout 1s
// -- sh -c 'sleep 30 & sleep 30'` returns in about a second with exit 124
// and leaves no sleep running.
func TestTimeoutKillsBackgroundedSleep(t *testing.T) {
	w := openWS(t, "")
	m := marker()
	start := time.Now()
	res := execute(t, w, backend.ExecRequest{
		Argv: []string{"sh", "-c", "echo started; sleep " + m + " & sleep " + m}, Timeout: time.Second,
	})
	elapsed := time.Since(start)
	if !res.TimedOut || res.ExitCode != 124 || res.Signal != int(syscall.SIGTERM) || res.Stdout != "started\n" {
		t.Fatalf("result %+v, want timed out, exit 124, SIGTERM, partial output", res)
	}
	if elapsed < time.Second || elapsed > 1500*time.Millisecond {
		t.Fatalf("returned after %s, want about 1 s", elapsed)
	}
	noneLeft(t, m, "sleep 30 & sleep 30 at 1 s")
}

// A group that ignores SIGTERM gets SIGKILL after the grace period.
func TestTimeoutEscalatesToKill(t *testing.T) {
	w := openWS(t, `{"kill_grace": "200ms"}`)
	m := marker()
	start := time.Now()
	res := execute(t, w, backend.ExecRequest{
		Shell: "trap '' TERM; sleep " + m + " & sleep " + m, Timeout: 300 * time.Millisecond,
	})
	elapsed := time.Since(start)
	if !res.TimedOut || res.ExitCode != 124 || res.Signal != int(syscall.SIGKILL) {
		t.Fatalf("result %+v, want timed out by SIGKILL", res)
	}
	if elapsed < 500*time.Millisecond || elapsed > 1200*time.Millisecond {
		t.Fatalf("returned after %s, want timeout + grace ≈ 0.5 s", elapsed)
	}
	noneLeft(t, m, "a tree ignoring SIGTERM")

	// A leader that traps SIGTERM and exits on its own reports the signal
	// that ended it.
	res = execute(t, w, backend.ExecRequest{Shell: "trap 'exit 3' TERM; sleep " + m + " & wait", Timeout: 200 * time.Millisecond})
	if !res.TimedOut || res.ExitCode != 124 || res.Signal != int(syscall.SIGTERM) {
		t.Fatalf("trapping leader: %+v", res)
	}
	noneLeft(t, m, "a trapping leader's child")
}

// When the command exits by itself, what it left running in the background
// is killed, and the call does not wait for it.
func TestExitKillsBackground(t *testing.T) {
	w := openWS(t, "")
	m := marker()
	start := time.Now()
	res := execute(t, w, backend.ExecRequest{Shell: "sleep " + m + " & echo done", Timeout: 10 * time.Second})
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Fatalf("returned after %s: it waited for the background child", elapsed)
	}
	if res.ExitCode != 0 || res.TimedOut || res.Stdout != "done\n" {
		t.Fatalf("result %+v", res)
	}
	noneLeft(t, m, "a background child of a finished command")
	// Nor with its output discarded, nor from a script.
	execute(t, w, backend.ExecRequest{Shell: "sleep " + m + " &", DiscardOutput: true})
	noneLeft(t, m, "a background child, output discarded")
	if _, err := w.Shell().ExecuteScript(bg, backend.ScriptRequest{Script: "sleep " + m + " &\n"}); err != nil {
		t.Fatal(err)
	}
	noneLeft(t, m, "a background child of a script")
}

// A process that leaves the group (setsid) and clears its environment
// cannot be found; if it holds the output pipes, the call still returns
// after the grace period.
func TestEscapedWriterDoesNotHang(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("setsid (util-linux) is missing")
		}
		t.Skip("needs setsid (util-linux)")
	}
	var logs syncbuf.Buffer
	b, err := New(backend.Options{
		StateDir: t.TempDir(), Config: []byte(`{"kill_grace": "300ms"}`),
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(bg)
	ws, err := b.Open(bg, backend.WorkspaceSpec{Session: "esc"})
	if err != nil {
		t.Fatal(err)
	}
	m := marker()
	t.Cleanup(func() {
		for _, p := range living(t, m) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	start := time.Now()
	// The pause lets setsid leave the group before the group is killed;
	// env -i drops the marker, so the sweep does not find it either.
	res := execute(t, ws.(*Workspace), backend.ExecRequest{Shell: "env -i setsid sleep " + m + " & sleep 0.2; echo out", Timeout: 10 * time.Second})
	elapsed := time.Since(start)
	if len(living(t, m)) == 0 {
		t.Fatal("the setsid'd sleep is not running: the test proves nothing")
	}
	if res.ExitCode != 0 || res.Stdout != "out\n" {
		t.Fatalf("result %+v", res)
	}
	if elapsed < 500*time.Millisecond || elapsed > 1500*time.Millisecond {
		t.Fatalf("returned after %s, want 0.2 s of command and the 300 ms drain bound", elapsed)
	}
	if !strings.Contains(logs.String(), "host.exec.output_held") {
		t.Fatalf("no warning about the held output: %s", logs.String())
	}
}

// setsidShell starts "setsid sleep m" in the background and waits until it
// has left the command's process group (its session is its own), so the
// group kill cannot take it by luck.
func setsidShell(m string) string {
	return "setsid sleep " + m + " & while [ \"$(cut -d' ' -f6 /proc/$!/stat)\" != \"$!\" ]; do sleep 0.01; done; "
}

// A child that left the group with setsid but kept its environment dies
// with its command: at the timeout, and when the command exits by itself.
func TestSetsidChildKilled(t *testing.T) {
	w := openWS(t, `{"kill_grace": "200ms"}`)
	m := marker()
	res := execute(t, w, backend.ExecRequest{Shell: setsidShell(m) + "sleep " + m, Timeout: time.Second})
	if !res.TimedOut {
		t.Fatalf("result %+v, want a timeout", res)
	}
	noneLeft(t, m, "a setsid'd child at the timeout")
	res = execute(t, w, backend.ExecRequest{Shell: setsidShell(m) + "(setsid sh -c 'env -i sleep " + m + " & wait' &); echo done", Timeout: 10 * time.Second})
	if res.ExitCode != 0 || res.Stdout != "done\n" {
		t.Fatalf("result %+v", res)
	}
	noneLeft(t, m, "setsid'd children of a finished command")
	// Nor does a decoy marker in the environment or argv protect anything.
	res = execute(t, w, backend.ExecRequest{Shell: "FOO=WAI_EXEC= " + setsidShell(m) + "echo done", Timeout: 10 * time.Second})
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	noneLeft(t, m, "a setsid'd child with FOO=WAI_EXEC=")
}

// The marker is one whole environment entry: the same text inside another
// variable, with a suffix, or cut short is not it.
func TestMarkerEntryExact(t *testing.T) {
	want := []byte("\x00WAI_EXEC=abc\x00")
	for env, has := range map[string]bool{
		"A=1\x00WAI_EXEC=abc\x00":     true,
		"WAI_EXEC=abc\x00":            true,
		"WAI_EXEC=abc":                true, // no final NUL: environ cut short by a rewrite
		"FOO=WAI_EXEC=abc\x00":        false,
		"WAI_EXEC=abcd\x00":           false,
		"WAI_EXEC=ab\x00":             false,
		"XWAI_EXEC=abc\x00":           false,
		"A=WAI_EXEC=abc\x00B=abc\x00": false,
		"":                            false,
	} {
		if got := hasEntry([]byte("\x00"+env+"\x00"), want); got != has {
			t.Errorf("environ %q: has the marker %v, want %v", env, got, has)
		}
	}
}

// Cancelling the context kills like a timeout, and is reported as an error
// next to the partial result; a deadline on the context is a timeout.
func TestContext(t *testing.T) {
	w := openWS(t, `{"kill_grace": "200ms"}`)
	m := marker()
	ctx, cancel := context.WithCancel(bg)
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	res, err := w.Shell().Execute(ctx, backend.ExecRequest{Shell: "echo before; sleep " + m + " & sleep " + m, Timeout: 20 * time.Second})
	if !errors.Is(err, context.Canceled) || res.Signal != int(syscall.SIGTERM) || res.TimedOut || res.Stdout != "before\n" {
		t.Fatalf("cancelled: %+v, %v", res, err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Fatalf("cancelled at 0.2 s, returned after %s", elapsed)
	}
	noneLeft(t, m, "a cancelled command")

	ctx, cancel = context.WithTimeout(bg, 300*time.Millisecond)
	defer cancel()
	res, err = w.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"sleep", m}, Timeout: 20 * time.Second})
	if err != nil || !res.TimedOut || res.ExitCode != 124 {
		t.Fatalf("caller's deadline: %+v, %v; want a timed-out result", res, err)
	}
	noneLeft(t, m, "a command past the caller's deadline")
}

// Closing a workspace stops its running commands.
func TestCloseStopsCommands(t *testing.T) {
	b := newBackend(t, `{"kill_grace": "200ms"}`, backend.Limits{})
	ws, err := b.Open(bg, backend.WorkspaceSpec{Session: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	m := marker()
	errc := make(chan error, 1)
	go func() {
		_, err := ws.Shell().Execute(bg, backend.ExecRequest{Shell: "sleep " + m + " & sleep " + m, Timeout: 30 * time.Second})
		errc <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); len(living(t, m)) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the command did not start")
		}
	}
	start := time.Now()
	if err := ws.Close(bg); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Fatalf("Close took %s", elapsed)
	}
	backendtest.WantKind(t, <-errc, backend.ErrUnavailable, "workspace was closed")
	noneLeft(t, m, "commands of a closed workspace")
}

// Memory stays bounded however much a command prints: 100 MB of output
// costs about the output cap, not the output.
func TestOutputMemoryBounded(t *testing.T) {
	w := openWS(t, "")
	req := backend.ExecRequest{Argv: []string{"head", "-c", "100000000", "/dev/zero"}}
	execute(t, w, req) // warm up pools and lazily built state
	var before, after runtimeStats
	before.read()
	res := execute(t, w, req)
	after.read()
	if !res.Truncated || len(res.Stdout) > w.b.limits.MaxOutputBytes+64 || !strings.Contains(res.Stdout, "[truncated 99967232 bytes]") {
		t.Fatalf("100 MB: truncated %v, %d bytes kept, marker present %v", res.Truncated, len(res.Stdout), strings.Contains(res.Stdout, "[truncated"))
	}
	// The cap is 32 KiB per stream; the result strings copy it once more.
	if grew := after.alloc - before.alloc; grew > 1<<20 {
		t.Fatalf("capturing 100 MB allocated %d bytes, want well under 1 MiB", grew)
	}
	t.Logf("capturing 100 MB allocated %d bytes in %d objects", after.alloc-before.alloc, after.objects-before.objects)
}

// Commands of one workspace run side by side without mixing their output.
func TestConcurrentCommands(t *testing.T) {
	w := openWS(t, "")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := strings.Repeat(string(rune('a'+i)), 60000)
			res, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"cat"}, Stdin: in})
			if err != nil {
				t.Errorf("command %d: %v", i, err)
				return
			}
			body := strings.Replace(res.Stdout, fmt.Sprintf("\n...[truncated %d bytes]...\n", 60000-32768), "", 1)
			if body != in[:32768] || !res.Truncated {
				t.Errorf("command %d: got %d bytes starting %q", i, len(res.Stdout), res.Stdout[:min(40, len(res.Stdout))])
			}
		}()
	}
	wg.Wait()
}

// runtimeStats samples the heap counters.
type runtimeStats struct{ alloc, objects uint64 }

func (s *runtimeStats) read() {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s.alloc, s.objects = m.TotalAlloc, m.Mallocs
}
