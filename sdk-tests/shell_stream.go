package sdktests

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// sink records what a command's live output callback receives and checks
// the contract's promises as it goes: no overlapping calls, none after
// Execute returned.
type sink struct {
	mu       sync.Mutex
	busy     bool
	overlap  bool
	returned bool
	late     int
	out, err bytes.Buffer
	chunks   int
	// want is closed once stdout contains this text ("" for never).
	want string
	seen chan struct{}
}

func newSink(want string) *sink { return &sink{want: want, seen: make(chan struct{})} }

func (s *sink) fn(stream backend.Stream, p []byte) {
	s.mu.Lock()
	if s.busy {
		s.overlap = true
	}
	s.busy = true
	if s.returned {
		s.late++
	}
	s.chunks++
	switch stream {
	case backend.Stdout:
		s.out.Write(p)
		if s.want != "" && strings.Contains(s.out.String(), s.want) {
			s.want = ""
			close(s.seen)
		}
	case backend.Stderr:
		s.err.Write(p)
	}
	s.mu.Unlock()
	// The window in which a second, overlapping call would be caught.
	runtime.Gosched()
	s.mu.Lock()
	s.busy = false
	s.mu.Unlock()
}

// done marks Execute returned: any later call is a contract violation.
func (s *sink) done() {
	s.mu.Lock()
	s.returned = true
	s.mu.Unlock()
}

// verify reports the contract violations seen.
func (s *sink) verify(t *T, what string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.overlap {
		t.Errorf("%s: two live-output calls overlapped; the contract says one at a time", what)
	}
	if s.late > 0 {
		t.Errorf("%s: %d live-output calls came after Execute returned", what, s.late)
	}
}

func (s *sink) streams() (string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String(), s.err.String()
}

// checkStreamsBeforeEnd: output reaches the callback while the command
// still runs. The command prints, then waits for a file the check creates
// only once it has seen that output: a backend that delivers output at the
// end never lets the command finish (the watchdog fails the check).
func checkStreamsBeforeEnd(t *T, w *ws) {
	s := newSink("first\n")
	script := "echo first; echo err-first >&2; while [ ! -e go ]; do sleep 0.05; done; echo second; echo err-second >&2"
	type result struct {
		res backend.ExecResult
		err error
	}
	ended := make(chan result, 1)
	go func() {
		res, err := w.execErr(backend.ExecRequest{Shell: script, Cwd: w.p(""), Timeout: 5 * time.Minute, Output: s.fn})
		s.done()
		ended <- result{res, err}
	}()
	select {
	case <-s.seen:
	case r := <-ended:
		t.Fatalf("the command ended (exit %d, err %v) before its first line reached the live output; it waits for a file the check had not created",
			r.res.ExitCode, r.err)
	case <-t.Context().Done():
		return // the watchdog reports it
	}
	w.write("go", "")
	var r result
	select {
	case r = <-ended:
	case <-t.Context().Done():
		return
	}
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("streamed command: exit %d, err %v, stderr %q", r.res.ExitCode, r.err, r.res.Stderr)
	}
	out, errOut := s.streams()
	if out != "first\nsecond\n" || errOut != "err-first\nerr-second\n" {
		t.Errorf("live output: stdout %q stderr %q, want %q and %q, in order", out, errOut, "first\nsecond\n", "err-first\nerr-second\n")
	}
	if r.res.Stdout != out || r.res.Stderr != errOut {
		t.Errorf("the result (stdout %q stderr %q) differs from the live output", r.res.Stdout, r.res.Stderr)
	}
	s.verify(t, "streamed command")
}

// checkStreamOrder: many small writes arrive complete and in order, and
// the sink sees all of them even past the result's cap.
func checkStreamOrder(t *T, w *ws) {
	s := newSink("")
	res, err := w.execErr(backend.ExecRequest{Shell: "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done", Cwd: w.p(""), Output: s.fn})
	s.done()
	if err != nil {
		t.Fatalf("2000 lines: %v", err)
	}
	var want strings.Builder
	for i := range 2000 {
		want.WriteString("line" + strconv.Itoa(i) + "\n")
	}
	out, _ := s.streams()
	if out != want.String() {
		t.Errorf("live output of 2000 lines: %d bytes, want %d in order (first difference near byte %d)", len(out), want.Len(), firstDiff(out, want.String()))
	}
	if !res.Truncated {
		t.Errorf("2000 lines over a %d-byte cap: result not truncated", w.limits.MaxOutputBytes)
	}
	s.verify(t, "2000 lines")
}

// checkStreamTimeout: a command killed at its timeout has streamed what it
// printed, and the callback is quiet once Execute returned.
func checkStreamTimeout(t *T, w *ws) {
	s := newSink("")
	res, err := w.execErr(backend.ExecRequest{Shell: "echo before; sleep 90", Timeout: time.Second, Cwd: w.p(""), Output: s.fn})
	s.done()
	if err != nil || !res.TimedOut {
		t.Fatalf("echo; sleep 90 with a 1 s timeout: timed_out %v, err %v", res.TimedOut, err)
	}
	if out, _ := s.streams(); out != "before\n" {
		t.Errorf("timed-out command streamed %q, want %q", out, "before\n")
	}
	s.verify(t, "timed-out command")
}

// checkStreamDiscard: DiscardOutput never calls the callback.
func checkStreamDiscard(t *T, w *ws) {
	s := newSink("")
	res, err := w.execErr(backend.ExecRequest{Shell: "echo hidden; echo hidden >&2", Cwd: w.p(""), DiscardOutput: true, Output: s.fn})
	s.done()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("discarded command: exit %d, err %v", res.ExitCode, err)
	}
	s.mu.Lock()
	n := s.chunks
	s.mu.Unlock()
	if n != 0 {
		t.Errorf("DiscardOutput: the live output was called %d times, want never", n)
	}
}

// checkStreamScript: ExecuteScript streams as Execute does.
func checkStreamScript(t *T, w *ws) {
	s := newSink("")
	res, err := w.Shell().ExecuteScript(t.Context(), backend.ScriptRequest{Script: "echo a\necho b >&2\necho c\n", Cwd: w.p(""), Output: s.fn})
	s.done()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("script: exit %d, err %v", res.ExitCode, err)
	}
	if out, errOut := s.streams(); out != "a\nc\n" || errOut != "b\n" {
		t.Errorf("script live output: stdout %q stderr %q, want %q and %q", out, errOut, "a\nc\n", "b\n")
	}
	s.verify(t, "script")
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
