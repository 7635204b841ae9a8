package sdktests

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/wai-dev/wai/host/backend"
)

// sleepMarker returns a sleep duration no other process on the machine
// uses, so that a scan of /proc can find the processes of one check.
func sleepMarker() string {
	return fmt.Sprintf("91.%09d", rand.IntN(1_000_000_000))
}

// killSlack is how late a kill may come back and still count as prompt.
// The commands these tests kill would run for 60 s or more, so a backend
// that waits for them fails all the same; the slack only absorbs a loaded
// machine (at load 40 a Podman kill took 8-19 s, and CI runs at load 4-20).
// How fast a kill is belongs in the benchmarks, not here.
const killSlack = 20 * time.Second

// processesWith lists the processes whose command line contains marker,
// scanning /proc through the workspace's own shell: that works on the host
// and inside a container alike. The scan's own command line holds the
// marker as a regexp ("91[.]…") that does not match itself.
func processesWith(t *T, w *ws, marker string) []string {
	t.Helper()
	res := w.exec(backend.ExecRequest{Argv: []string{"sh", "-c", scanScript(marker)}, Timeout: 20 * time.Second})
	return scanned(res.Stdout, marker)
}

// scanScript prints "/proc/PID/cmdline: command line" for each process
// whose command line holds marker.
func scanScript(marker string) string {
	re := strings.ReplaceAll(marker, ".", "[.]")
	return `for f in $(grep -l -a -e '` + re + `' /proc/[0-9]*/cmdline 2>/dev/null); do ` +
		`printf '%s: ' "$f"; tr '\0' ' ' < "$f" 2>/dev/null; echo; done; true`
}

// scanned parses the output of scanScript.
func scanned(out, marker string) []string {
	var procs []string
	for _, line := range strings.Split(out, "\n") {
		// A process that exited between grep and tr leaves an empty line.
		if _, cmd, _ := strings.Cut(line, ": "); strings.Contains(cmd, marker) {
			procs = append(procs, line)
		}
	}
	return procs
}

// noProcessesLeft fails the check if a process carrying marker is still
// alive a second after the call returned (a kill is delivered
// asynchronously; a killed process that is not reaped yet has an empty
// command line and does not count).
func noProcessesLeft(t *T, w *ws, marker, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		procs := processesWith(t, w, marker)
		if len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s left processes behind:\n%s", what, strings.Join(procs, "\n"))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// wantTimedOut checks the result of a command killed at its timeout.
func wantTimedOut(t *T, what string, res backend.ExecResult, elapsed, limit time.Duration) {
	t.Helper()
	if !res.TimedOut || res.ExitCode != backend.TimeoutExitCode || res.Signal == 0 || res.Success() {
		t.Errorf("%s: timed_out %v exit %d signal %d, want timed out, exit %d and the signal that ended it",
			what, res.TimedOut, res.ExitCode, res.Signal, backend.TimeoutExitCode)
	}
	if elapsed > limit || res.Duration > limit {
		t.Errorf("%s: returned after %s (result duration %s), want under %s", what, elapsed, res.Duration, limit)
	}
}

func checkTimeout(t *T, w *ws) {
	start := time.Now()
	res := w.exec(backend.ExecRequest{Argv: []string{"sleep", "90"}, Timeout: 500 * time.Millisecond, Cwd: w.p("")})
	elapsed := time.Since(start)
	wantTimedOut(t, "sleep 90 with a 0.5 s timeout", res, elapsed, killSlack)
	if res.Duration < 400*time.Millisecond {
		t.Errorf("sleep 90 with a 0.5 s timeout: result duration %s, want about the timeout", res.Duration)
	}
}

func checkTimeoutPartialOutput(t *T, w *ws) {
	res := w.exec(backend.ExecRequest{Shell: "echo before; echo err-before >&2; sleep 90", Timeout: time.Second, Cwd: w.p("")})
	wantTimedOut(t, "echo; sleep 90 with a 1 s timeout", res, 0, killSlack)
	if res.Stdout != "before\n" || res.Stderr != "err-before\n" {
		t.Errorf("timed-out command lost its output: stdout %q stderr %q", res.Stdout, res.Stderr)
	}
}

func checkTimeoutKillsTree(t *T, w *ws) {
	m := sleepMarker()
	// The scan must see a live process, or finding none proves nothing. The
	// background sleep may still be between fork and exec when the scan
	// runs, hence the pause and the retries.
	var procs []string
	var res backend.ExecResult
	for range 3 {
		res = w.exec(backend.ExecRequest{Shell: "sleep " + m + " & sleep 0.2; " + scanScript(m) + "; kill $!", Cwd: w.p("")})
		procs = scanned(res.Stdout, m)
		if slices.ContainsFunc(procs, func(p string) bool {
			_, cmd, _ := strings.Cut(p, ": ")
			return strings.HasPrefix(cmd, "sleep "+m)
		}) {
			break
		}
		procs = nil
	}
	if procs == nil {
		t.Fatalf("the /proc scan does not work in this workspace: it found no live sleep %s (stdout %q, stderr %q)", m, res.Stdout, res.Stderr)
	}
	cases := []struct{ name, shell string }{
		{"backgrounded grandchild", "sleep " + m + " & sleep " + m},
		{"nested shell", "sh -c 'sleep " + m + " & sleep " + m + "' & sleep " + m},
		{"pipeline", "sleep " + m + " | sleep " + m},
	}
	for _, c := range cases {
		start := time.Now()
		res := w.exec(backend.ExecRequest{Shell: c.shell, Timeout: 500 * time.Millisecond, Cwd: w.p("")})
		wantTimedOut(t, c.name, res, time.Since(start), killSlack)
		noProcessesLeft(t, w, m, c.name+" ("+c.shell+")")
	}
	// A tree that ignores SIGTERM needs the SIGKILL that follows it.
	start := time.Now()
	res = w.exec(backend.ExecRequest{Shell: "trap '' TERM; sleep " + m + " & sleep " + m, Timeout: 500 * time.Millisecond, Cwd: w.p("")})
	wantTimedOut(t, "tree ignoring SIGTERM", res, time.Since(start), 4*time.Second+killSlack)
	noProcessesLeft(t, w, m, "tree ignoring SIGTERM")
}

func checkScriptTimeoutKillsTree(t *T, w *ws) {
	m := sleepMarker()
	start := time.Now()
	res, err := w.Shell().ExecuteScript(t.Context(), backend.ScriptRequest{
		Script: "sleep " + m + " &\nsleep " + m + "\n", Timeout: 500 * time.Millisecond, Cwd: w.p("")})
	if err != nil {
		t.Fatalf("ExecuteScript: %v", err)
	}
	wantTimedOut(t, "script with a backgrounded sleep", res, time.Since(start), killSlack)
	noProcessesLeft(t, w, m, "timed-out script")
}

func checkDefaultTimeout(t *T, w *ws) {
	start := time.Now()
	res := w.exec(backend.ExecRequest{Argv: []string{"sleep", "90"}})
	wantTimedOut(t, "sleep 90 under a 1 s default timeout", res, time.Since(start), killSlack)
}

func checkBackgroundChild(t *T, w *ws) {
	m := sleepMarker()
	start := time.Now()
	res := w.exec(backend.ExecRequest{Shell: "sleep " + m + " & echo done", Timeout: 80 * time.Second, Cwd: w.p("")})
	elapsed := time.Since(start)
	if res.TimedOut || res.ExitCode != 0 || !strings.Contains(res.Stdout, "done") {
		t.Errorf("command that exits leaving a child on its stdout: timed_out %v exit %d stdout %q, "+
			"want exit 0 and its output: the call must not wait for the child", res.TimedOut, res.ExitCode, res.Stdout)
	}
	if elapsed > killSlack {
		t.Errorf("command that exits leaving a child on its stdout: returned after %s, want well before its 80 s timeout", elapsed)
	}
	if procs := processesWith(t, w, m); len(procs) > 0 {
		t.Logf("the backgrounded child outlived the call (allowed): %v", procs)
	}
}

func checkContextCancel(t *T, w *ws) {
	m := sleepMarker()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	timer := time.AfterFunc(300*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	res, err := w.Shell().Execute(ctx, backend.ExecRequest{Shell: "sleep " + m + " & sleep " + m, Timeout: 80 * time.Second, Cwd: w.p("")})
	if elapsed := time.Since(start); elapsed > killSlack {
		t.Errorf("context cancelled after 0.3 s: the call returned after %s, want promptly", elapsed)
	}
	if err == nil && res.ExitCode == 0 {
		t.Errorf("context cancelled mid-run: no error and exit 0, want an error or a killed command")
	}
	noProcessesLeft(t, w, m, "command whose context was cancelled")
}

func checkCancelledContext(t *T, w *ws) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := w.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"touch", w.p("cancel-marker")}})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Execute with a cancelled context: error %v, want one wrapping context.Canceled", err)
	}
	_, err = w.Shell().ExecuteScript(ctx, backend.ScriptRequest{Script: "touch " + w.p("cancel-marker") + "\n"})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("ExecuteScript with a cancelled context: error %v, want one wrapping context.Canceled", err)
	}
	if w.b.Caps.RealProcesses && w.exists("cancel-marker") {
		t.Errorf("a command ran although its context was cancelled before the call")
	}
}

func checkTruncation(t *T, w *ws) {
	limit := w.limits.MaxOutputBytes
	gen := "printf HEADMARK; head -c 5000 /dev/zero | tr '\\0' x; printf TAILMARK"
	res := w.sh("{ " + gen + "; } >&2; " + gen)
	for _, s := range []struct{ name, out string }{{"stdout", res.Stdout}, {"stderr", res.Stderr}} {
		if !strings.HasPrefix(s.out, "HEADMARK") || !strings.HasSuffix(s.out, "TAILMARK") {
			t.Errorf("%s lost its head or tail: %q", s.name, elide(s.out))
		}
		if !strings.Contains(s.out, backend.TruncatedMarker) {
			t.Errorf("%s has no %q marker: %q", s.name, backend.TruncatedMarker, elide(s.out))
		}
		if len(s.out) > limit+100 {
			t.Errorf("%s is %d bytes, over the limit of %d (plus the marker)", s.name, len(s.out), limit)
		}
	}
	if !res.Truncated {
		t.Errorf("truncated output without the Truncated flag")
	}
	// Only stderr over the limit: the flag covers either stream.
	res = w.sh("echo small; { " + gen + "; } >&2")
	if !res.Truncated || res.Stdout != "small\n" {
		t.Errorf("stderr over the limit: truncated %v stdout %q, want true and the small stdout intact", res.Truncated, res.Stdout)
	}
	// A cut through multi-byte characters still leaves valid UTF-8.
	res = w.sh("i=0; while [ $i -lt 300 ]; do printf 'é€😀'; i=$((i+1)); done")
	if !utf8.ValidString(res.Stdout) || !res.Truncated {
		t.Errorf("multi-byte output cut at the limit: valid UTF-8 %v, truncated %v", utf8.ValidString(res.Stdout), res.Truncated)
	}
}

func checkNoTruncation(t *T, w *ws) {
	res := w.sh("head -c 1000 /dev/zero | tr '\\0' y")
	if res.Truncated || len(res.Stdout) != 1000 || strings.Contains(res.Stdout, backend.TruncatedMarker) {
		t.Errorf("1000 bytes under a 1024-byte limit: %d bytes, truncated %v", len(res.Stdout), res.Truncated)
	}
}

func checkCaptureOff(t *T, w *ws) {
	res := w.exec(backend.ExecRequest{Shell: "echo out; echo err >&2; touch capture-marker; exit 3", DiscardOutput: true, Cwd: w.p("")})
	if res.Stdout != "" || res.Stderr != "" || res.ExitCode != 3 {
		t.Errorf("capture off: stdout %q stderr %q exit %d, want no output and exit 3", res.Stdout, res.Stderr, res.ExitCode)
	}
	if !w.exists("capture-marker") {
		t.Errorf("capture off: the command did not run")
	}
	start := time.Now()
	res = w.exec(backend.ExecRequest{Shell: "head -c 20000000 /dev/zero", DiscardOutput: true, Timeout: 20 * time.Second, Cwd: w.p("")})
	if res.ExitCode != 0 || res.TimedOut || res.Stdout != "" {
		t.Errorf("capture off, 20 MB printed: exit %d timed_out %v, %d bytes of stdout", res.ExitCode, res.TimedOut, len(res.Stdout))
	}
	t.Logf("20 MB discarded in %s", time.Since(start))
}

func checkInvalidUTF8(t *T, w *ws) {
	res := w.sh(`printf 'ok\377\376end\n'; printf 'e\377rr\n' >&2`)
	for _, s := range []struct{ name, out string }{{"stdout", res.Stdout}, {"stderr", res.Stderr}} {
		if !utf8.ValidString(s.out) || !strings.Contains(s.out, "\uFFFD") {
			t.Errorf("%s %q: want valid UTF-8 with U+FFFD for the invalid bytes", s.name, s.out)
		}
	}
	if !strings.HasPrefix(res.Stdout, "ok") || !strings.HasSuffix(res.Stdout, "end\n") {
		t.Errorf("stdout %q lost the valid text around the invalid bytes", res.Stdout)
	}
}

func checkBoundedMemory(t *T, w *ws) {
	const total = 100 << 20
	const bound = 16 << 20
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, baseTotal := ms.HeapAlloc, ms.TotalAlloc
	var peak atomic.Uint64
	peak.Store(base)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
			}
		}
	})
	start := time.Now()
	res := w.exec(backend.ExecRequest{
		Shell:   fmt.Sprintf("yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ. | head -c %d", total),
		Timeout: 80 * time.Second, Cwd: w.p("")})
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	runtime.ReadMemStats(&ms)
	growth := int64(peak.Load()) - int64(base)
	if res.ExitCode != 0 || res.TimedOut {
		t.Errorf("printing 100 MiB: exit %d timed_out %v (stderr %q)", res.ExitCode, res.TimedOut, res.Stderr)
	}
	if !res.Truncated || len(res.Stdout) > w.limits.MaxOutputBytes+100 {
		t.Errorf("printing 100 MiB: truncated %v, %d bytes kept, want at most %d", res.Truncated, len(res.Stdout), w.limits.MaxOutputBytes)
	}
	if growth > bound {
		t.Errorf("printing 100 MiB grew the heap by %.1f MiB at its peak, over the bound of %d MiB: output is not streamed through a bounded buffer",
			float64(growth)/(1<<20), bound>>20)
	}
	t.Logf("100 MiB of output in %s (%.0f MiB/s); heap peak +%.1f MiB; %.1f MiB allocated in all",
		elapsed.Round(time.Millisecond), float64(total>>20)/elapsed.Seconds(),
		float64(max(growth, 0))/(1<<20), float64(ms.TotalAlloc-baseTotal)/(1<<20))
}

func checkConcurrent(t *T, w *ws) {
	const n, lines = 8, 300
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			tok := fmt.Sprintf("tok-%d", k)
			res, err := w.execErr(backend.ExecRequest{Cwd: w.p(""), Shell: fmt.Sprintf(
				"i=0; while [ $i -lt %d ]; do echo %s-line; i=$((i+1)); done; echo %s-err >&2", lines, tok, tok)})
			if err != nil {
				t.Errorf("concurrent Execute %d: %v", k, err)
				return
			}
			if want := strings.Repeat(tok+"-line\n", lines); res.Stdout != want {
				t.Errorf("concurrent Execute %d: stdout is not its own %d lines: %q", k, lines, elide(res.Stdout))
			}
			if res.Stderr != tok+"-err\n" {
				t.Errorf("concurrent Execute %d: stderr %q, want %q", k, res.Stderr, tok+"-err\n")
			}
		})
	}
	wg.Wait()
}
