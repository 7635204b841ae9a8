package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host/mcpserver/mcptest"
	"github.com/wai-dev/wai/internal/plugbuild"
	"github.com/wai-dev/wai/internal/syncbuf"
)

// Most tests call run in this process, with their own streams and
// environment: flag parsing, exit statuses and which stream gets what are
// the CLI's contract, and run is all of the CLI but main's signal handling
// and os.Exit. A handful run the built binary (waiBinary): signals, a
// session held by another process, a plain build without the Podman tags,
// and the README's mcpServers entry, which names the binary.

const testVersion = "v0.0.0-clitest"

func TestMain(m *testing.M) {
	version = testVersion
	// No developer's config may leak into a test that names none: the
	// config is looked up under $XDG_CONFIG_HOME (and ./wai.toml, which
	// cmd/wai has not). go's own settings stay where they are.
	cfgHome, err := os.MkdirTemp("", "wai-cli-test-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.Getenv("GOENV") == "" {
		if out, err := exec.Command("go", "env", "GOENV").Output(); err == nil {
			os.Setenv("GOENV", strings.TrimSpace(string(out)))
		}
	}
	os.Setenv("XDG_CONFIG_HOME", cfgHome)
	flag.Parse()
	buildEnv = os.Environ()
	if p, err := exec.LookPath("go"); err == nil {
		goTool = p
	}
	if wd, err := os.Getwd(); err == nil {
		buildDir = wd
	}
	prebuilt := prebuild()
	code := m.Run()
	prebuilt()
	os.RemoveAll(cfgHome)
	if testTemp != "" {
		os.RemoveAll(testTemp)
	}
	os.Exit(code)
}

var (
	testTempMu sync.Mutex
	testTemp   string // holds what outlives one test, the binaries; removed by TestMain

	plainBin builtOnce

	// buildEnv, goTool and buildDir are the environment TestMain started
	// with, the go command on its PATH and its working directory (this
	// package's): the builds run with them, whatever a serial test sets
	// meanwhile (TestNewcomerNoPodman empties PATH).
	buildEnv []string
	goTool   = "go"
	buildDir = "."
	// lookups is done once the builds prebuild started look nothing up on
	// the process's PATH any more: a test that changes PATH waits for it.
	lookups sync.WaitGroup
)

// builtOnce is a binary the tests build once per run, on first use, into
// a directory that outlives the test that asked first.
type builtOnce struct {
	once sync.Once
	path string
	err  error
}

// get builds with build the first time, into a new directory under
// testTempDir, and returns the binary's path.
func (b *builtOnce) get(t testing.TB, build func(dir string) (string, error)) string {
	t.Helper()
	b.do(build)
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// do builds with build the first time; later calls wait for it.
func (b *builtOnce) do(build func(dir string) (string, error)) {
	b.once.Do(func() {
		dir, err := testTempDir()
		if err != nil {
			b.err = err
			return
		}
		b.path, b.err = build(dir)
	})
}

// prebuild starts building the binaries the tests run, when every test
// runs: the serial tests, which run first, leave a core idle that the
// builds then use, instead of the parallel tests' CPU. A test that needs
// a binary waits for its build (builtOnce); a focused run (-run) builds
// only what it uses, when it does. The returned func waits for the builds.
func prebuild() (wait func()) {
	for _, name := range []string{"test.run", "test.list"} {
		if f := flag.Lookup(name); f == nil || f.Value.String() != "" {
			return func() {}
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	lookups.Add(1)
	go func() {
		defer wg.Done()
		plainBin.do(buildPlain)
	}()
	go func() {
		defer wg.Done()
		_, _ = bundledWasmPaths() // go list, on the process's PATH
		lookups.Done()
		bundledBin.do(buildBundled)
	}()
	return wg.Wait
}

// testTempDir returns a new directory that lives until the tests end.
func testTempDir() (string, error) {
	testTempMu.Lock()
	defer testTempMu.Unlock()
	if testTemp == "" {
		dir, err := os.MkdirTemp("", "wai-cli-test-")
		if err != nil {
			return "", err
		}
		testTemp = dir
	}
	return os.MkdirTemp(testTemp, "")
}

// waiBinary builds wai as a plain `go build` does (no Podman tags, no
// plugins built in) once per test run, on first use, and returns its path.
func waiBinary(t testing.TB) string {
	t.Helper()
	return plainBin.get(t, buildPlain)
}

func buildPlain(dir string) (string, error) {
	bin := filepath.Join(dir, "wai")
	build := exec.Command(goTool, "build", "-ldflags", "-X main.version="+testVersion, "-o", bin, ".")
	build.Env, build.Dir = buildEnv, buildDir
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building wai: %v\n%s", err, out)
	}
	return bin, nil
}

// env is one isolated wai installation: its own working directory, state
// and config directories, so nothing of the developer's leaks in.
type env struct {
	t       *testing.T
	dir     string // working directory of the binary
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
// temporary directory, sharing the tests' Wasm compilation cache: the race
// detector makes compiling a plugin take wazero many seconds, and these
// tests are about the CLI.
func newEnv(t *testing.T, extraConfig string) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), state: plugbuild.StateDir(t), timeout: 2 * time.Minute}
	e.config = filepath.Join(t.TempDir(), "wai.toml")
	cfg := fmt.Sprintf("backend = %q\nstate_dir = %q\n%s", "host", e.state, extraConfig)
	if err := os.WriteFile(e.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// with is e for a subtest: the same installation, failures reported to t.
func (e *env) with(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// getenv is the environment wai sees in process: the test's variables
// over this process's.
func (e *env) getenv(name string) string {
	for i := len(e.extra) - 1; i >= 0; i-- {
		if k, v, _ := strings.Cut(e.extra[i], "="); k == name {
			return v
		}
	}
	return os.Getenv(name)
}

// command is the built binary with args, in the env's own working
// directory, home and environment.
func (e *env) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, waiBinary(e.t), args...)
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

// serveStdio starts the built binary's `wai serve` on the env's config and
// connects the official Go SDK client, named client, to it over stdio; the
// server ends with ctx or when the session is closed.
func (e *env) serveStdio(ctx context.Context, client string) *mcp.ClientSession {
	e.t.Helper()
	cmd := e.command(ctx, "serve", "--config", e.config)
	cmd.Stdin = nil // the transport gives it a pipe
	return mcptest.ConnectCommand(e.t, ctx, client, cmd)
}

// withConfig puts --config right after "exec" when args start with it.
func (e *env) withConfig(args []string) []string {
	if len(args) > 0 && args[0] == "exec" {
		return append([]string{"exec", "--config", e.config}, args[1:]...)
	}
	return args
}

// run runs wai with args in this process; when args start with "exec",
// --config is added right after it.
func (e *env) run(args ...string) result {
	e.t.Helper()
	return e.timed(args, func(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
		return runStdio(ctx, args, stdio{in: strings.NewReader(e.stdin), out: stdout, err: stderr, getenv: e.getenv}), nil
	})
}

// runBinary runs the built binary with args, as run does in process.
func (e *env) runBinary(args ...string) result {
	e.t.Helper()
	return e.timed(args, func(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
		cmd := e.command(ctx, args...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), nil // a failing wai is a result
		}
		return 0, err
	})
}

// timed is run and runBinary around wai itself (do, which answers the
// exit status, or an error when wai could not run): --config after
// "exec", the streams captured, the time taken, and the test failed when
// wai outlives e.timeout.
func (e *env) timed(args []string, do func(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error)) result {
	e.t.Helper()
	args = e.withConfig(args)
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	var stdout, stderr syncbuf.Buffer
	start := time.Now()
	code, err := do(ctx, args, &stdout, &stderr)
	r := result{stdout: string(stdout.Bytes()), took: time.Since(start), code: code}
	r.notice, r.stderr = splitNotice(string(stderr.Bytes()))
	if err != nil {
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
