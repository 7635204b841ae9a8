//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// killTestPrefix keeps this file's containers apart from every other
// test's (and every other run's), so a failure here never touches theirs.
const killTestPrefix = "wai-podkill"

// TestForkBombKeptSessionRecovers: a fork bomb at the pids limit leaves no
// pid for the kill script. The result must say the kill could not be
// confirmed and the container was removed instead; and the removal must
// happen (with a context of its own, not the kill's expired one), or the
// next process to open the kept session reattaches the wedged container and
// every command fails with 125.
func TestForkBombKeptSessionRecovers(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	// workspace_size 0: a kept session's workspace image stays mounted
	// after the test, and the bomb is not about the workspace.
	// The Podman exec path's kill (the agent kills without forking, and
	// falls back to this one): agent = false.
	extra := map[string]any{"name_prefix": killTestPrefix, "pids_limit": 64, "workspace_size": "0", "agent": false}
	b := newTestBackend(t, backend.Limits{}, extra)
	b.log = slog.New(rec)
	w := openTest(t, b, true)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		if err := b.remove(ctx, w.name); err != nil {
			t.Errorf("removing the kept container: %v", err)
		}
	})
	if _, err := w.FS().Write(bg, backend.WriteRequest{Path: "keep.txt", Content: "still here\n"}); err != nil {
		t.Fatal(err)
	}
	// The container's health check runs beside its first command: let it
	// pass before the bomb takes every pid.
	run(t, w, backend.ExecRequest{Argv: []string{"true"}})
	// Unlike the classic `b() { b | b & }; b`, whose shells die when fork
	// fails, this one holds every pid until something kills it. Its
	// deadline passes once it holds them, however long that takes.
	st, err := w.ensure(bg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := deadlineWhen(func() bool { n, ok := b.taskCount(st.id); return ok && n >= 64-pidsHeadroom })
	res, err := w.Shell().Execute(ctx, backend.ExecRequest{Shell: "while :; do sleep 1000 & done", Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// Which comes first is a race: the deadline (a timeout by SIGKILL), or
	// dash giving up when a fork fails at the limit (exit 2) with its
	// sleeps left behind. Either way what it left holds every pid, and the
	// container must go.
	timedOut := res.TimedOut && res.ExitCode == backend.TimeoutExitCode && res.Signal == 9
	forkFailed := !res.TimedOut && res.ExitCode == 2
	if !timedOut && !forkFailed {
		t.Errorf("fork bomb: timed_out %v exit %d signal %d, want a timeout by SIGKILL or dash's exit 2 when fork fails", res.TimedOut, res.ExitCode, res.Signal)
	}
	if !strings.Contains(res.Stderr, "could not be confirmed stopped") || !strings.Contains(res.Stderr, "container was removed") {
		t.Errorf("fork bomb: stderr does not say the kill was unconfirmed and the container removed: %q", elide(lastLines(res.Stderr, 2)))
	}
	if rec.count("runtime.podman.removed") != 1 {
		t.Errorf("fork bomb: events %s, want one runtime.podman.removed", rec)
	}
	t.Logf("fork bomb: events %s; stderr ends %q", rec, lastLines(res.Stderr, 1))

	// Another wai process opens the kept session: it knows nothing of the
	// failed kill and takes whatever container runs under the name.
	if err := w.Close(bg); err != nil {
		t.Fatal(err)
	}
	extra["workspace_dir"] = b.cfg.WorkspaceDir
	b2 := newTestBackend(t, backend.Limits{}, extra)
	var ws2 backend.Workspace
	ws2, err = b2.Open(bg, backend.WorkspaceSpec{Session: w.session, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	w2 := ws2.(*Workspace)
	t.Cleanup(func() { _ = w2.Close(bg) })
	for i := range 2 {
		res = run(t, w2, backend.ExecRequest{Shell: "cat keep.txt"})
		if res.ExitCode != 0 || res.Stdout != "still here\n" {
			t.Fatalf("command %d after the fork bomb, from a new process: exit %d stdout %q stderr %q, want exit 0 and the file",
				i+1, res.ExitCode, res.Stdout, elide(res.Stderr))
		}
	}
}

// TestMarkerSpoofKilledAtTimeout: a process that forges, empties or hides
// the exec marker, leaves its session and loses its parent still dies at
// the timeout: the marker is compared as a whole environment entry, and
// only the markers of running commands protect anything.
func TestMarkerSpoofKilledAtTimeout(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, map[string]any{"name_prefix": killTestPrefix})
	w := openTest(t, b, false)
	for _, c := range []struct{ name, spawn string }{
		{"decoy marker", "env WAI_EXEC=decoy setsid sleep {M}"},
		{"empty marker", "env WAI_EXEC= setsid sleep {M}"},
		{"marker inside another variable", "unset WAI_EXEC; FOO=WAI_EXEC= setsid sleep {M}"},
		{"real marker inside another variable", "env -i \"FOO=WAI_EXEC=$WAI_EXEC\" setsid sleep {M}"},
		{"real marker with a suffix", "env \"WAI_EXEC=${WAI_EXEC}x\" setsid sleep {M}"},
		{"marker in argv only", "unset WAI_EXEC; setsid sh -c 'sleep {M}' \"WAI_EXEC=$WAI_EXEC\""},
	} {
		m := marker()
		c.spawn = strings.ReplaceAll(c.spawn, "{M}", m)
		// The subshell exits at once, orphaning the spawn; the command waits
		// until it is the sleep, in a session of its own, with its forged
		// environment, then for its timeout.
		res := run(t, w, backend.ExecRequest{Shell: "(" + c.spawn + " &)\n" + waitOrphan(m) + "sleep " + m, Timeout: 5 * time.Second})
		if !res.TimedOut || res.Signal == 0 {
			t.Errorf("%s: timed_out %v signal %d, want a timeout", c.name, res.TimedOut, res.Signal)
		}
		if left := leftovers(t, w, m); left != "" {
			t.Errorf("%s: survived the timeout:\n%s", c.name, left)
		}
	}
}

// TestExitKillsBackground: what a command that exits by itself leaves
// running ends with it, as on the host backend, however it hid: plain
// background, setsid, a cleared environment, a forged marker; from a shell
// string, an argv and a script. A command that leaves nothing costs no
// kill exec.
func TestExitKillsBackground(t *testing.T) {
	t.Parallel()
	_, w, rec := recordedSession(t, map[string]any{"name_prefix": killTestPrefix}, false)
	// The container's first command races its health check, whose exec
	// is a process the stats call counts: judge the second one.
	run(t, w, backend.ExecRequest{Argv: []string{"true"}})
	before := rec.count("runtime.podman.kill")
	run(t, w, backend.ExecRequest{Argv: []string{"true"}})
	if n := rec.count("runtime.podman.kill") - before; n != 0 {
		t.Errorf("a command that left nothing ran the kill script (%d runtime.podman.kill events: %s)", n, rec)
	}
	m := marker()
	for _, c := range []struct{ name, shell string }{
		{"sleep &", "sleep " + m + " &"},
		{"setsid", "setsid sleep " + m + " &"},
		{"env -i", "env -i /bin/sleep " + m + " &"},
		{"orphaned, setsid and env -i", "(env -i /usr/bin/setsid /bin/sleep " + m + " &)"},
		{"decoy marker", "(env WAI_EXEC=decoy setsid sleep " + m + " &)"},
	} {
		res := run(t, w, backend.ExecRequest{Shell: c.shell + "\necho done", Timeout: 30 * time.Second})
		if res.ExitCode != 0 || res.TimedOut || res.Stdout != "done\n" || res.Stderr != "" {
			t.Errorf("%s: exit %d timed_out %v stdout %q stderr %q", c.name, res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
		}
		if left := leftovers(t, w, m); left != "" {
			t.Errorf("%s: outlived its command:\n%s", c.name, left)
		}
	}
	run(t, w, backend.ExecRequest{Argv: []string{"sh", "-c", "sleep " + m + " &"}, DiscardOutput: true})
	if left := leftovers(t, w, m); left != "" {
		t.Errorf("argv sh -c 'sleep &': outlived its command:\n%s", left)
	}
	if _, err := w.Shell().ExecuteScript(bg, backend.ScriptRequest{Script: "sleep " + m + " &\n"}); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, w, m); left != "" {
		t.Errorf("script: outlived its command:\n%s", left)
	}
}

// TestKeepBackgroundSetting: keep_background = true is the one way to let
// a background job outlive its command (a server for the next command);
// without it the job ends with its command (TestExitKillsBackground).
func TestKeepBackgroundSetting(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, map[string]any{"name_prefix": killTestPrefix, "keep_background": true})
	w := openTest(t, b, false)
	m := marker()
	res := run(t, w, backend.ExecRequest{Shell: "sleep " + m + " &\necho done", Timeout: 30 * time.Second})
	if res.ExitCode != 0 || res.Stdout != "done\n" {
		t.Fatalf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if left := leftovers(t, w, m); left == "" {
		t.Errorf("with keep_background = true the background sleep was killed with its command")
	}
}

// TestExitKillSparesOthers: the kill after one command's end leaves a
// concurrent command of the same session alone, background jobs included
// (those that keep their marker: one that also cleared its environment and
// left its session would look like the other's, see kill.go).
func TestExitKillSparesOthers(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, map[string]any{"name_prefix": killTestPrefix})
	w := openTest(t, b, false)
	innocent, m := marker(), marker()
	started := make(chan struct{})
	done := make(chan backend.ExecResult, 1)
	go func() {
		res, _ := w.Shell().Execute(bg, backend.ExecRequest{
			Shell:   "sleep " + innocent + " & (setsid sleep " + innocent + " &); while [ ! -e /tmp/go." + m + " ]; do sleep 0.1; done; echo survived",
			Timeout: 2 * time.Minute})
		done <- res
	}()
	go func() {
		defer close(started)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if sleepers(leftovers(t, w, innocent)) == 2 {
				return
			}
		}
	}()
	<-started
	run(t, w, backend.ExecRequest{Shell: "sleep " + m + " & (env -i setsid sleep " + m + " &); echo ok"})
	left := leftovers(t, w, innocent)
	run(t, w, backend.ExecRequest{Shell: "touch /tmp/go." + m})
	if res := <-done; res.Stdout != "survived\n" || res.ExitCode != 0 {
		t.Errorf("a concurrent command was hit by another's exit kill: exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if sleepers(left) != 2 {
		t.Errorf("the concurrent command's background jobs after the other's exit: %q, want both", left)
	}
	if l := leftovers(t, w, m); l != "" {
		t.Errorf("the exiting command's background jobs survived:\n%s", l)
	}
}

// waitOrphan is shell code that waits until a process "sleep m" is a
// child of the init process.
func waitOrphan(m string) string {
	return `orphaned() {
	for p in $(grep -l -a -F -e '` + m + `' /proc/[0-9]*/cmdline 2>/dev/null); do
		l=; read -r l <"${p%/cmdline}/stat" 2>/dev/null
		case "$l" in *"(sleep) "?" 1 "*) return 0;; esac
	done
	return 1
}
until orphaned; do sleep 0.1; done
`
}

// sleepers counts the sleep processes in a leftovers listing (which also
// shows the shells whose command line holds the marker).
func sleepers(listing string) int {
	n := 0
	for _, l := range strings.Split(listing, "\n") {
		if strings.HasPrefix(l, "sleep ") {
			n++
		}
	}
	return n
}

// deadlineWhen is a context whose deadline passes once cond holds (polled):
// a timeout that comes at the moment a test needs, not at a guess.
func deadlineWhen(cond func() bool) context.Context {
	c := &condDeadline{Context: bg, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for deadline := time.Now().Add(3 * time.Minute); !cond() && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return c
}

type condDeadline struct {
	context.Context
	done chan struct{}
}

func (c *condDeadline) Done() <-chan struct{} { return c.done }
func (c *condDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
