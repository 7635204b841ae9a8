package sdktests

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Backend is the backend under test, as the suites see it.
type Backend struct {
	// Name is what Info().Backend must say ("host", "podman", "mock").
	// Empty skips that one comparison.
	Name string
	// Open returns a fresh workspace governed by l. The suite closes the
	// workspace itself (and reports a failing Close); Open registers with
	// t.Cleanup whatever else it created, such as the backend. Open runs
	// on the subtest's own goroutine, so it may call t.Fatal.
	Open func(t *testing.T, l backend.Limits) backend.Workspace
	Caps Caps
	// Watchdog bounds each check; zero means 30 s. Checks that are slow by
	// nature (100 MB of output) get a multiple of it.
	Watchdog time.Duration
}

// Caps declares what the backend under test can do. The suites choose
// their checks from it: a check that needs a capability the backend lacks
// is skipped with a message naming the capability.
type Caps struct {
	// RealProcesses: commands really run, so exit codes, timeouts, env,
	// cwd, stdin and process trees can be observed, and the shell and the
	// filesystem see the same files. False for test doubles.
	RealProcesses bool
	// Sandboxed is what Info().Sandboxed must say. With RealProcesses it
	// also turns on the sandbox checks: host files and processes are
	// invisible to commands.
	Sandboxed bool
	// Python: python3 is on the PATH of commands.
	Python bool
	// Network is what Info().NetworkEnabled must say. Without it, and with
	// a sandbox, commands must see no network interface but loopback.
	Network bool
	// HostDir returns the host directory behind a workspace, where the
	// suite plants symlinks, FIFOs and files "outside" it; nil for
	// in-memory workspaces. Without it, a backend with RealProcesses gets
	// its symlinks and FIFOs planted by running ln and mkfifo in the
	// workspace, and the checks that need the host side are skipped.
	HostDir func(ws backend.Workspace) string
	// Streaming: ExecRequest.Output receives output while the command
	// runs, not only once it has ended. Turns on the live-output checks
	// (with RealProcesses).
	Streaming bool
	// Jobs: workspaces implement backend.JobRunner (RunJobs).
	Jobs bool
	// Reopen opens session, kept, on a Backend instance of its own each
	// call (another process, as far as the session can tell), and removes
	// the session when the test ends; nil skips the checks that need it.
	Reopen func(t *testing.T, session string) backend.Workspace
	// Containers, when set, declares backend.Containers: it returns the
	// backend's Containers and an owner (a session of the backend) to make
	// them for, and RunContainers checks them. Their image must have
	// /bin/sh and bash.
	Containers func(t *testing.T) (backend.Containers, backend.ContainerOwner)
}

func (b Backend) watchdog() time.Duration {
	if b.Watchdog > 0 {
		return b.Watchdog
	}
	return 30 * time.Second
}

// needs is the set of capabilities a check requires.
type needs uint

const (
	needProcesses needs = 1 << iota // Caps.RealProcesses
	needPython                      // Caps.Python (implies processes)
	needPlant                       // a way to plant symlinks and FIFOs
	needHostDir                     // Caps.HostDir
	needSandbox                     // Caps.Sandboxed with real processes
	needNoNetwork                   // !Caps.Network (with a sandbox)
	needStreaming                   // Caps.Streaming (with real processes)
	needJobs                        // Caps.Jobs (with real processes)
	needReopen                      // Caps.Reopen
)

// missing returns why b cannot take a check with these needs, or "".
func (n needs) missing(b Backend) string {
	c := b.Caps
	switch {
	case n&(needProcesses|needPython|needSandbox|needStreaming|needJobs) != 0 && !c.RealProcesses:
		return "needs real processes: the backend declares Caps.RealProcesses=false"
	case n&needPython != 0 && !c.Python:
		return "needs python3: the backend declares Caps.Python=false"
	case n&needPlant != 0 && c.HostDir == nil && !c.RealProcesses:
		return "needs symlinks and FIFOs planted in the workspace: the backend has neither Caps.HostDir nor Caps.RealProcesses"
	case n&needHostDir != 0 && c.HostDir == nil:
		return "needs the host directory behind the workspace: the backend declares no Caps.HostDir"
	case n&needSandbox != 0 && !c.Sandboxed:
		return "sandbox check: the backend declares Caps.Sandboxed=false"
	case n&needJobs != 0 && !c.Jobs:
		return "job check: the backend declares Caps.Jobs=false"
	case n&needReopen != 0 && c.Reopen == nil:
		return "needs a second Backend on a kept session: the backend declares no Caps.Reopen"
	case n&needStreaming != 0 && !c.Streaming:
		return "live-output check: the backend declares Caps.Streaming=false"
	case n&needNoNetwork != 0 && c.Network:
		return "no-network check: the backend declares Caps.Network=true"
	}
	return ""
}

// T is what a check gets instead of *testing.T. The check runs on its own
// goroutine so that the watchdog can give up on it: after the watchdog
// fires, whatever the abandoned check still reports is dropped, and its
// context is cancelled so a backend that honours contexts lets go.
type T struct {
	t       *testing.T
	ctx     context.Context
	mu      sync.Mutex
	gone    bool   // abandoned by the watchdog
	skipped string // reason, when the check skipped itself
}

// Context is cancelled when the watchdog gives up on the check or the
// subtest ends.
func (t *T) Context() context.Context { return t.ctx }

// Name is the subtest's name.
func (t *T) Name() string { return t.t.Name() }

// Helper marks the calling function as a test helper.
func (t *T) Helper() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.gone {
		t.t.Helper()
	}
}

// Logf logs like testing.T.Logf.
func (t *T) Logf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.gone {
		t.t.Helper()
		t.t.Logf(format, args...)
	}
}

// Errorf marks the check failed and carries on.
func (t *T) Errorf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.gone {
		t.t.Helper()
		t.t.Errorf(format, args...)
	}
}

// Fatalf marks the check failed and ends it.
func (t *T) Fatalf(format string, args ...any) {
	t.mu.Lock()
	if !t.gone {
		t.t.Helper()
		t.t.Errorf(format, args...)
	}
	t.mu.Unlock()
	exitCheck()
}

// Skipf ends the check and reports it skipped.
func (t *T) Skipf(format string, args ...any) {
	t.mu.Lock()
	t.skipped = fmt.Sprintf(format, args...)
	t.mu.Unlock()
	exitCheck()
}

// TempDir returns a directory removed when the subtest ends.
func (t *T) TempDir() string { return t.t.TempDir() }

// Cleanup registers f to run when the subtest ends.
func (t *T) Cleanup(f func()) { t.t.Cleanup(f) }

// check is one conformance check.
type check struct {
	name  string
	needs needs
	// limits, when set, adjusts the limits of a workspace of the check's
	// own; otherwise the check shares the suite's workspace, unless fresh.
	limits func(*backend.Limits)
	fresh  bool
	// sequential checks run alone (no t.Parallel), for measurements.
	sequential bool
	// slow multiplies the watchdog.
	slow int
	fn   func(t *T, w *ws)
}

// suite runs checks against one backend.
type suite struct {
	b      Backend
	shared func(t *testing.T) *ws
}

func newSuite(t *testing.T, b Backend) *suite {
	t.Helper()
	if b.Open == nil {
		t.Fatal("sdktests: Backend.Open is nil")
	}
	s := &suite{b: b}
	var once sync.Once
	var shared *ws
	// The shared workspace belongs to the parent test, which outlives all
	// parallel checks; it is opened on first need, on the goroutine of
	// the parent, before any check starts.
	s.shared = func(pt *testing.T) *ws {
		once.Do(func() { shared = s.open(pt, backend.DefaultLimits()) })
		return shared
	}
	return s
}

// open opens a workspace and registers its Close.
func (s *suite) open(t *testing.T, l backend.Limits) *ws {
	t.Helper()
	if err := l.Validate(); err != nil {
		t.Fatalf("sdktests: bad limits for the check: %v", err)
	}
	wsp := s.b.Open(t, l)
	if wsp == nil {
		t.Fatal("sdktests: Backend.Open returned a nil workspace")
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := wsp.Close(ctx); err != nil {
			t.Errorf("closing the workspace: %v", err)
		}
	})
	return &ws{Workspace: wsp, b: s.b, limits: l}
}

// run registers checks as subtests of t. Checks on the shared workspace
// get a directory of their own inside it (ws.dir).
func (s *suite) run(t *testing.T, checks []check) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range checks {
		if seen[c.name] {
			t.Fatalf("sdktests: duplicate check %s", c.name)
		}
		seen[c.name] = true
	}
	// Sequential checks first: parallel subtests only start once the
	// parent's function returns, so these run with nothing else going on.
	for _, c := range checks {
		if c.sequential {
			s.runOne(t, c)
		}
	}
	for _, c := range checks {
		if !c.sequential {
			s.runOne(t, c)
		}
	}
}

func (s *suite) runOne(pt *testing.T, c check) {
	var sharedWS *ws
	if c.limits == nil && !c.fresh && c.needs.missing(s.b) == "" {
		sharedWS = s.shared(pt)
	}
	pt.Run(c.name, func(t *testing.T) {
		if why := c.needs.missing(s.b); why != "" {
			t.Skip(why)
		}
		if !c.sequential {
			t.Parallel()
		}
		w := sharedWS
		if w == nil {
			l := backend.DefaultLimits()
			if c.limits != nil {
				c.limits(&l)
			}
			w = s.open(t, l)
		} else {
			w = w.withDir(c.name)
		}
		d := s.b.watchdog() * time.Duration(max(c.slow, 1))
		watch(t, d, func(tt *T) {
			w.t = tt
			w.prepare()
			c.fn(tt, w)
		})
	})
}

// watch runs fn on its own goroutine and waits for it at most d.
func watch(t *testing.T, d time.Duration, fn func(*T)) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	tt := &T{t: t, ctx: ctx}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				tt.Errorf("check panicked: %v\n%s", r, debug.Stack())
			}
		}()
		fn(tt)
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
		tt.mu.Lock()
		reason := tt.skipped
		tt.mu.Unlock()
		if reason != "" {
			t.Skip(reason)
		}
	case <-timer.C:
		tt.mu.Lock()
		tt.gone = true
		tt.mu.Unlock()
		cancel()
		t.Errorf("watchdog: %s did not finish within %s; a backend call is hanging "+
			"(its goroutine is abandoned, and its context cancelled)", t.Name(), d)
	}
}

// exitCheck ends the check's goroutine, running its deferred calls, the way
// t.FailNow ends a test goroutine.
func exitCheck() { runtime.Goexit() }

// dirName turns a check name into a directory name.
func dirName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return "chk-" + b.String()
}
