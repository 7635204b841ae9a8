package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The tests run the real binary, as a user does: flag parsing, exit
// statuses and which stream gets what are the CLI's contract.
var waiBin string

const testVersion = "v0.0.0-clitest"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wai-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	waiBin = filepath.Join(dir, "wai")
	build := exec.Command("go", "build", "-ldflags", "-X main.version="+testVersion, "-o", waiBin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building wai: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one isolated wai installation: its own working directory, state
// and config directories, so nothing of the developer's leaks in.
type env struct {
	t       *testing.T
	dir     string // working directory
	state   string // state_dir
	config  string // --config file
	extra   []string
	stdin   string
	timeout time.Duration
}

type result struct {
	stdout, stderr string
	// notice is the line wai prints first on stderr when commands run
	// unsandboxed (these tests run on the host backend); run takes it out
	// of stderr so the tests of the command's own output stay exact.
	notice string
	code   int
	took   time.Duration
}

const noticePrefix = "wai: notice: running on the host backend"

// splitNotice takes the unsandboxed notice, when it is the first line,
// out of stderr.
func splitNotice(stderr string) (notice, rest string) {
	if !strings.HasPrefix(stderr, noticePrefix) {
		return "", stderr
	}
	line, rest, _ := strings.Cut(stderr, "\n")
	return line, rest
}

// newEnv writes a config that picks the host backend explicitly (it is not
// a sandbox, so wai never picks it silently) and keeps state in the test's
// temporary directory.
func newEnv(t *testing.T, extraConfig string) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), state: t.TempDir(), timeout: time.Minute}
	e.config = filepath.Join(t.TempDir(), "wai.toml")
	cfg := fmt.Sprintf("backend = %q\nstate_dir = %q\n%s", "host", e.state, extraConfig)
	if err := os.WriteFile(e.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, waiBin, args...)
	cmd.Dir = e.dir
	home := e.t.TempDir()
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"),
	)
	cmd.Env = append(cmd.Env, e.extra...)
	cmd.Stdin = strings.NewReader(e.stdin)
	return cmd
}

// run runs wai with args; when args start with "exec", --config is added
// right after it.
func (e *env) run(args ...string) result {
	e.t.Helper()
	if len(args) > 0 && args[0] == "exec" {
		args = append([]string{"exec", "--config", e.config}, args[1:]...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	cmd := e.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), took: time.Since(start)}
	r.notice, r.stderr = splitNotice(stderr.String())
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		e.t.Fatalf("running wai %q: %v\nstderr: %s", args, err, r.stderr)
	}
	if ctx.Err() != nil {
		e.t.Fatalf("wai %q did not return within %s\nstderr: %s", args, e.timeout, r.stderr)
	}
	return r
}

func (r result) String() string {
	return fmt.Sprintf("exit %d after %s\nstdout: %q\nstderr: %q\nnotice: %q", r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr, r.notice)
}

// marker returns a string no other process on the machine carries.
func marker(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "wai-test-" + hex.EncodeToString(b)
}

// processesWith lists the processes whose environment contains s: the
// whole tree of a command started with --env MARKER=s, grandchildren
// included, wherever it was reparented to.
func processesWith(t *testing.T, s string) []string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("scans /proc")
	}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, d := range dirs {
		environ, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(environ, []byte(s)) {
			continue // gone, a zombie, or not ours to read
		}
		cmdline, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		found = append(found, filepath.Base(d)+": "+strings.ReplaceAll(strings.TrimSpace(string(cmdline)), "\x00", " "))
	}
	return found
}

// waitGone polls until no process carries s, for at most d: a SIGKILLed
// process takes a moment to be torn down after its parent saw it die.
func waitGone(t *testing.T, s string, d time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := processesWith(t, s)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}
