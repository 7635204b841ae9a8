package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestExecEcho(t *testing.T) {
	t.Parallel()
	r := newEnv(t, "").run("exec", "--", "echo", "hi")
	if r.code != 0 || r.stdout != "hi\n" || r.stderr != "" {
		t.Fatalf("want hi on stdout, nothing on stderr, exit 0; got %v", r)
	}
}

func TestExecStreamsAndStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	cases := []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"-c", "echo out; echo err >&2; exit 3"}, 3, "out\n", "err\n"},
		{[]string{"--", "sh", "-c", "exit 7"}, 7, "", ""},
		{[]string{"false"}, 1, "", ""},
		{[]string{"true"}, 0, "", ""},
		// argv is not interpreted by a shell: the $ and ; reach echo as is.
		{[]string{"--", "echo", "$HOME;", "a  b"}, 0, "$HOME; a  b\n", ""},
		// killed by a signal: 128+N, as a shell reports it.
		{[]string{"-c", "kill -TERM $$"}, 128 + int(syscall.SIGTERM), "", ""},
		// The command's own 2 is not wai's: wai's own failures are 125.
		{[]string{"--", "sh", "-c", "echo no such file >&2; exit 2"}, 2, "", "no such file\n"},
		// Not found and not executable: 127 and 126, as a shell says.
		{[]string{"--", "wai-no-such-command"}, 127, "", "*"},
		{[]string{"--", "/etc/passwd"}, 126, "", "*"},
	}
	for _, c := range cases {
		r := e.run(append([]string{"exec"}, c.args...)...)
		if r.code != c.code || r.stdout != c.stdout || (c.stderr != "*" && r.stderr != c.stderr) {
			t.Errorf("wai exec %q: want exit %d, stdout %q, stderr %q; got %v", c.args, c.code, c.stdout, c.stderr, r)
		}
	}
}

// The check: a one-second timeout on a command that backgrounds a
// sleep returns in about a second with 124 and leaves nothing running.
func TestExecTimeoutKillsTheTree(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	m := marker(t)
	r := e.run("exec", "--timeout", "1s", "--env", "WAI_TEST_MARKER="+m, "--", "sh", "-c", "sleep 30 & sleep 30")
	if r.code != 124 {
		t.Fatalf("want exit 124; got %v", r)
	}
	if r.took < time.Second || r.took > 4*time.Second {
		t.Errorf("returned after %s, want about 1s", r.took)
	}
	if !strings.Contains(r.stderr, "timed out after 1s") {
		t.Errorf("stderr should say it timed out: %q", r.stderr)
	}
	// The host backend kills a process group; it must not claim more.
	if !strings.Contains(r.stderr, "every process in its process group") {
		t.Errorf("stderr should say the process group was killed, and no more, on the host backend: %q", r.stderr)
	}
	if left := waitGone(t, m, time.Second); len(left) > 0 {
		t.Errorf("processes of the timed-out command are still running:\n%s", strings.Join(left, "\n"))
	}
}

func TestExecInterruptStopsTheCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	m := marker(t)
	cmd := e.command(t.Context(), "exec", "--config", e.config, "--env", "WAI_TEST_MARKER="+m, "-c", "sleep 30 & sleep 30")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(processesWith(t, m)) < 2 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the command never started; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	took := time.Since(start)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("want exit %d after an interrupt, got %v; stderr: %s", exitInterrupted, err, stderr.String())
	}
	if took > 5*time.Second {
		t.Errorf("wai took %s to stop after the interrupt", took)
	}
	if left := waitGone(t, m, time.Second); len(left) > 0 {
		t.Errorf("processes of the interrupted command are still running:\n%s", strings.Join(left, "\n"))
	}
}

// A throwaway session's workspace is removed when the command ends; a
// named one is kept for the next command of that session.
func TestExecSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")

	r := e.run("exec", "-c", "touch scratch && pwd")
	if r.code != 0 {
		t.Fatalf("throwaway session: %v", r)
	}
	throwaway := strings.TrimSpace(r.stdout)
	if !filepath.IsAbs(throwaway) {
		t.Fatalf("pwd printed %q, want an absolute workspace path", throwaway)
	}
	if _, err := os.Stat(throwaway); !os.IsNotExist(err) {
		t.Errorf("the throwaway workspace %s is still there after the command (stat: %v)", throwaway, err)
	}

	r = e.run("exec", "--session", "keep1", "-c", "mkdir -p sub && echo kept > sub/note && pwd")
	if r.code != 0 {
		t.Fatalf("named session: %v", r)
	}
	kept := strings.TrimSpace(r.stdout)
	if b, err := os.ReadFile(filepath.Join(kept, "sub", "note")); err != nil || string(b) != "kept\n" {
		t.Fatalf("the kept workspace %s lost its file: %q, %v", kept, b, err)
	}
	r = e.run("exec", "--session", "keep1", "--cwd", "sub", "--env", "GREETING=hello", "-c", `cat note; echo "$GREETING"`)
	if r.code != 0 || r.stdout != "kept\nhello\n" {
		t.Errorf("second command of the session, in sub/ with GREETING set: %v", r)
	}
}

func TestExecStdin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "[limits]\nmax_stdin_bytes = 16\n")
	e.stdin = "hello, stdin\n"
	if r := e.run("exec", "--stdin", "--", "cat"); r.code != 0 || r.stdout != e.stdin {
		t.Errorf("--stdin: want the input echoed back; got %v", r)
	}
	// Without --stdin the command does not see wai's input.
	if r := e.run("exec", "--", "cat"); r.code != 0 || r.stdout != "" {
		t.Errorf("without --stdin: want empty input; got %v", r)
	}
	e.stdin = strings.Repeat("x", 17)
	r := e.run("exec", "--stdin", "--", "cat")
	if r.code != exitExecFailed || !strings.Contains(r.stderr, "max_stdin_bytes") || r.stdout != "" {
		t.Errorf("input over max_stdin_bytes: want exit %d naming the limit; got %v", exitExecFailed, r)
	}
}

// Every way wai can refuse before running anything: exit 125 (never a
// status the command itself commonly uses), a message that says what is
// wrong, nothing on stdout.
func TestExecRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	cases := []struct {
		name string
		args []string
		want []string // all must appear on stderr
	}{
		{"unknown flag", []string{"exec", "--bogus", "--", "true"}, []string{"flag provided but not defined: -bogus", "usage: wai exec", "wai help exec"}},
		{"no command", []string{"exec"}, []string{"no command", "usage: wai exec"}},
		{"command and -c", []string{"exec", "-c", "true", "false"}, []string{"not both", "usage: wai exec"}},
		{"malformed --env", []string{"exec", "--env", "NOEQUALS", "--", "true"}, []string{"NAME=VALUE"}},
		{"timeout out of range", []string{"exec", "--timeout", "1h", "--", "true"}, []string{"timeout", "hint:"}},
		{"cwd outside the workspace", []string{"exec", "--cwd", "../..", "--", "true"}, []string{"hint:"}},
		{"bad env name", []string{"exec", "--env", "1BAD=x", "--", "true"}, []string{"1BAD", "hint:"}},
		{"unknown backend", []string{"exec", "--backend", "nosuch", "--", "true"}, []string{"nosuch", "hint:"}},
		// The default blocklist applies to the CLI as to every caller
		// (mkfs --version would be harmless if it ran).
		{"denied by the default policy", []string{"exec", "--", "mkfs", "--version"}, []string{"blocklist", "hint: a policy refused"}},
		{"missing config file", []string{"exec", "--config", "/nonexistent/wai.toml", "--", "true"}, []string{"/nonexistent/wai.toml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// run puts its own --config first; a later one wins.
			checkRefusal(t, e.run(c.args...), c.want)
		})
	}
}

func checkRefusal(t *testing.T, r result, want []string) {
	t.Helper()
	if r.code != exitExecFailed || r.stdout != "" {
		t.Errorf("want exit %d and nothing on stdout; got %v", exitExecFailed, r)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

func TestExecBadConfigKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "# a comment\nbogus_key = 1\n")
	r := e.run("exec", "--", "true")
	// The config written by newEnv has two lines before the extra part.
	checkRefusal(t, r, []string{"bogus_key", "line 4"})
}

// With fallback = "host", a podman backend that cannot serve (here: not
// built in, so this runs the plain build's binary) hands the command to the host backend, and wai says plainly
// that it did not run sandboxed.
func TestExecFallbackSaysUnsandboxed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	cfg := fmt.Sprintf("backend = \"podman\"\nfallback = \"host\"\nstate_dir = %q\n", e.state)
	if err := os.WriteFile(e.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.runBinary("exec", "--", "echo", "hi")
	if r.code != 0 || r.stdout != "hi\n" {
		t.Fatalf("want hi through the fallback; got %v", r)
	}
	if !strings.Contains(r.notice, "because podman is unavailable") || !strings.Contains(r.notice, "NOT sandboxed") {
		t.Errorf("stderr does not say the command ran unsandboxed: %v", r)
	}
	// Without the fallback it is refused, with what to do.
	cfg = fmt.Sprintf("backend = \"podman\"\nstate_dir = %q\n", e.state)
	if err := os.WriteFile(e.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.runBinary("exec", "--", "echo", "hi")
	checkRefusal(t, r, []string{"make build", "hint: the backend cannot serve"})
}
