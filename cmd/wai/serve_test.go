package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host/mcpserver/mcptest"
	"github.com/wai-dev/wai/internal/syncbuf"
)

// wai serve, driven by the official Go SDK client as an agent drives it:
// over stdio, and over streamable HTTP. It runs in process; the README
// test drives the built binary as a subprocess, and the stop tests signal
// it.
func TestServe(t *testing.T) {
	t.Parallel()
	e, present := toolsEnv(t, "shell", "vfs")
	if _, ok := present["shell"]; !ok {
		t.Fatal("tools/shell is missing")
	}
	if _, ok := present["vfs"]; !ok {
		t.Fatal("tools/vfs is missing")
	}

	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		ctx := subtestContext(t)
		toServe, clientOut := io.Pipe()
		clientIn, fromServe := io.Pipe()
		s := startServeInProcess(t, ctx, e, nil, toServe, fromServe)
		c := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
		if err != nil {
			t.Fatal(err)
		}
		exercise(t, ctx, cs)
		// The client leaving closes wai's stdin: wai serve ends, status 0.
		cs.Close()
		if code := s.wait(); code != exitOK {
			t.Errorf("wai serve after its client left: status %d; stderr:\n%s", code, s.errText())
		}
	})

	t.Run("http with a token", func(t *testing.T) {
		t.Parallel()
		ctx := subtestContext(t)
		const token = "tok-0123456789abcdef"
		s := startServeInProcess(t, ctx, e, []string{"WAI_TEST_TOKEN=" + token}, nil, io.Discard,
			"--http", "127.0.0.1:0", "--token-env", "WAI_TEST_TOKEN")
		defer func() {
			if _, code := s.stop(); code != exitOK {
				t.Errorf("wai serve after an interrupt: status %d; stderr:\n%s", code, s.errText())
			}
		}()
		if resp := mcptest.Post(t, s.url, "", "", mcptest.InitializeBody); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a request without the token: status %d, want 401", resp.StatusCode)
		}

		c := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "1"}, nil)
		hc := &http.Client{Transport: mcptest.Bearer{Token: token}}
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		exercise(t, ctx, cs)
	})

	// Before any plugin loads: the plugin directory here is empty.
	t.Run("non-loopback without a configured token is refused", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "plugin_dir = \""+t.TempDir()+"\"\n")
		r := e.run("serve", "--config", e.config, "--http", "0.0.0.0:0", "--token-env", "WAI_TEST_UNSET_TOKEN")
		if r.code != exitError || !strings.Contains(r.stderr, "configure a token yourself") {
			t.Errorf("want a refusal naming the token; got %v", r)
		}
	})
}

// subtestContext bounds a parallel subtest from when it starts running:
// one made by the parent starts counting before the subtest waits for its
// turn, which under load (and other parallel tests) can be minutes.
func subtestContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// exercise lists the tools and uses shell_execute and the file tools, as
// the README's demo does.
func exercise(t *testing.T, ctx context.Context, cs *mcp.ClientSession) {
	t.Helper()
	have := mcptest.Tools(t, ctx, cs)
	// Each bundled tool arrives with a description, a schema and honest
	// hints: a client that auto-approves read-only tools must never
	// auto-approve a command or a write.
	type hints struct{ readOnly, destructive, idempotent, openWorld bool }
	for name, want := range map[string]hints{
		"shell_execute": {readOnly: false, destructive: true, idempotent: false, openWorld: true},
		"read_file":     {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		"write_file":    {readOnly: false, destructive: false, idempotent: false, openWorld: false},
		"edit_file":     {readOnly: false, destructive: true, idempotent: false, openWorld: false},
	} {
		tool := have[name]
		if tool == nil {
			t.Errorf("tools/list lacks %s", name)
			continue
		}
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("%s: description %q, schema %v; want both", name, tool.Description, tool.InputSchema)
		}
		a := tool.Annotations
		if a == nil {
			t.Errorf("%s has no annotations", name)
			continue
		}
		// Absent destructive and open-world hints mean true in MCP; the
		// destructive hint means nothing for a read-only tool.
		got := hints{a.ReadOnlyHint, !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint), a.IdempotentHint, a.OpenWorldHint == nil || *a.OpenWorldHint}
		if got != want {
			t.Errorf("%s annotations %+v, want %+v", name, got, want)
		}
	}
	callOK := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			t.Fatalf("%s failed: %s", name, b.String())
		}
		return b.String()
	}
	callOK("write_file", map[string]any{"file_path": "notes.txt", "content": "first line\n"})
	if got := callOK("read_file", map[string]any{"file_path": "notes.txt"}); !strings.Contains(got, "first line") {
		t.Errorf("read_file: %q", got)
	}
	if got := callOK("shell_execute", map[string]any{"command": []string{"cat", "notes.txt"}}); !strings.Contains(got, "first line") {
		t.Errorf("shell_execute: %q", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell_execute", Arguments: map[string]any{"command": []string{"sh", "-c", "exit 3"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Errorf("a command exiting 3 is not a tool error: %+v", res)
	}
}

// With no token configured, `wai serve --http` (loopback included) makes
// one in the state directory, private, prints where it is and not what it
// is, refuses requests without it, and reuses it on the next start; a
// token file others can read is refused, not reused, and a short token
// is refused.
func TestServeHTTPCreatesToken(t *testing.T) {
	t.Parallel()
	e, _ := toolsEnv(t, "shell")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	noEnvToken := []string{"WAI_MCP_TOKEN="}
	path := filepath.Join(e.state, "mcp", "token")

	s := startServeInProcess(t, ctx, e, noEnvToken, nil, io.Discard, "--http", "127.0.0.1:0")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no token file: %v; stderr:\n%s", err, s.errText())
	}
	token := strings.TrimSpace(string(data))
	if len(token) < 32 {
		t.Errorf("token of %d characters, want at least 32 (128 bits in hex)", len(token))
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %04o", p, fi.Mode().Perm(), err, want)
		}
	}
	if !strings.Contains(s.errText(), "created a bearer token in "+path) || !strings.Contains(s.errText(), "Authorization: Bearer") {
		t.Errorf("stderr does not say where the token is and how to send it:\n%s", s.errText())
	}
	if strings.Contains(s.errText(), token) {
		t.Errorf("the token itself is on stderr:\n%s", s.errText())
	}
	status := func(authorization string) int {
		t.Helper()
		return mcptest.Post(t, s.url, authorization, "", mcptest.InitializeBody).StatusCode
	}
	if got := status(""); got != http.StatusUnauthorized {
		t.Errorf("loopback request without the token: status %d, want 401", got)
	}
	if got := status("bearer " + token); got != http.StatusOK {
		t.Errorf("request with the created token: status %d, want 200", got)
	}
	if _, code := s.stop(); code != exitOK {
		t.Fatalf("stop: status %d", code)
	}

	s = startServeInProcess(t, ctx, e, noEnvToken, nil, io.Discard, "--http", "127.0.0.1:0", "--show-token")
	if !strings.Contains(s.errText(), "reusing the bearer token in "+path) || !strings.Contains(s.errText(), "bearer token: "+token) {
		t.Errorf("second start: want the same token reused and shown:\n%s", s.errText())
	}
	if got := status("Bearer " + token); got != http.StatusOK {
		t.Errorf("the reused token: status %d, want 200", got)
	}
	s.stop()

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.runEnv(noEnvToken, "serve", "--config", e.config, "--http", "127.0.0.1:0")
	if r.code != exitError || !strings.Contains(r.stderr, "chmod 600") || strings.Contains(r.stderr, "a policy refused") {
		t.Errorf("a token file others can read: want a refusal saying chmod 600; got %v", r)
	}
	r = e.runEnv([]string{"WAI_MCP_TOKEN=short"}, "serve", "--config", e.config, "--http", "127.0.0.1:0")
	if r.code != exitError || !strings.Contains(r.stderr, "at least 16") || strings.Contains(r.stderr, "short\n") {
		t.Errorf("a 5-byte token: want a refusal saying at least 16; got %v", r)
	}
}

// runEnv is run with extra environment variables.
func (e *env) runEnv(vars []string, args ...string) result {
	e.t.Helper()
	saved := e.extra
	e.extra = append(append([]string{}, e.extra...), vars...)
	defer func() { e.extra = saved }()
	return e.run(args...)
}

// servingInProcess is `wai serve` running in this process.
type servingInProcess struct {
	t      *testing.T
	url    string
	cancel context.CancelFunc
	stderr *syncbuf.Buffer
	code   chan int
}

// startServeInProcess runs `wai serve --config CONFIG ARGS…` with vars over
// the env's environment, reading stdin (empty when nil) and writing
// stdout; with --http among args it waits for the address line.
func startServeInProcess(t *testing.T, ctx context.Context, e *env, vars []string, stdin io.Reader, stdout io.Writer, args ...string) *servingInProcess {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &servingInProcess{t: t, cancel: cancel, stderr: &syncbuf.Buffer{}, code: make(chan int, 1)}
	getenv := (&env{extra: append(append([]string{}, e.extra...), vars...)}).getenv
	std := stdio{in: stdin, out: stdout, err: s.stderr, getenv: getenv}
	go func() {
		s.code <- runStdio(ctx, append([]string{"serve", "--config", e.config}, args...), std)
		if c, ok := stdout.(io.Closer); ok {
			c.Close()
		}
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.code:
		case <-time.After(time.Minute):
			t.Error("wai serve did not return within a minute of its context's end")
		}
	})
	if !slices.Contains(args, "--http") {
		return s
	}
	re := regexp.MustCompile(`(http://127\.0\.0\.1:\d+/)`)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		text := s.errText()
		if m := re.FindStringSubmatch(text); m != nil {
			// A first start is silent for as long as plugins compile
			// unless it says why before the address.
			if i := strings.Index(text, "loading plugins"); i < 0 || i > strings.Index(text, m[1]) {
				t.Errorf("wai serve --http did not say it was loading plugins before it listened; stderr:\n%s", text)
			}
			s.url = m[1]
			return s
		}
		select {
		case code := <-s.code:
			s.code <- code
			t.Fatalf("wai serve --http ended with status %d before it listened; stderr:\n%s", code, s.errText())
		default:
		}
	}
	t.Fatalf("wai serve --http printed no address; stderr:\n%s", s.errText())
	return nil
}

func (s *servingInProcess) errText() string { return string(s.stderr.Bytes()) }

// stop does what main does on the first SIGINT or SIGTERM (cancels the
// context) and returns how long wai serve took to return after it, and
// its status.
func (s *servingInProcess) stop() (time.Duration, int) {
	s.t.Helper()
	start := time.Now()
	s.cancel()
	code := s.wait()
	return time.Since(start), code
}

// wait returns wai serve's status once it has returned, and puts it back
// for the cleanup.
func (s *servingInProcess) wait() int {
	s.t.Helper()
	select {
	case code := <-s.code:
		s.code <- code
		return code
	case <-time.After(2 * time.Minute):
		s.t.Fatalf("wai serve did not return within 2 minutes; stderr:\n%s", s.errText())
	}
	return 0
}
