package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host/mcpserver/mcptest"
	"github.com/wai-dev/wai/internal/syncbuf"
)

// serving is a `wai serve` process the test drives.
type serving struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	mu     sync.Mutex
	stderr strings.Builder
	exited chan error
}

func (s *serving) errText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// startServe starts `wai serve ARGS…`; with --http among args it waits for
// the address line.
func startServe(t *testing.T, ctx context.Context, e *env, env []string, args ...string) *serving {
	t.Helper()
	cmd := e.command(ctx, append([]string{"serve", "--config", e.config}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &serving{t: t, cmd: cmd, exited: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`(http://127\.0\.0\.1:\d+/)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.mu.Lock()
			s.stderr.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
		s.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})
	if strings.Contains(strings.Join(args, " "), "--http") {
		select {
		case s.url = <-addr:
		case <-time.After(2 * time.Minute):
		}
		if s.url == "" {
			t.Fatalf("wai serve --http printed no address; stderr:\n%s", s.errText())
		}
	}
	return s
}

// stop sends sig and returns how long wai took to exit after it, and its
// exit status.
func (s *serving) stop(sig os.Signal) (time.Duration, int) {
	s.t.Helper()
	start := time.Now()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		took := time.Since(start)
		var ee *exec.ExitError
		switch {
		case err == nil:
			return took, 0
		case errors.As(err, &ee):
			return took, ee.ExitCode()
		}
		s.t.Fatalf("waiting for wai serve: %v", err)
	case <-time.After(2 * time.Minute):
		s.t.Fatalf("wai serve did not exit within 2 minutes of %v; stderr:\n%s", sig, s.errText())
	}
	return 0, 0
}

// waitForProcess waits until a process whose command line has marker
// runs (host backend: on this machine).
func waitForProcess(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !processRuns(marker) {
		if time.Now().After(deadline) {
			t.Fatalf("no process %q started within a minute", marker)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func processRuns(marker string) bool {
	out, _ := exec.Command("pgrep", "-f", marker).Output()
	return strings.TrimSpace(string(out)) != ""
}

// checkStopped fails t if the command marked marker still runs or the
// host backend left a workspace under state: what a stopped wai serve
// must not leave behind.
func checkStopped(t *testing.T, marker, state string) {
	t.Helper()
	if processRuns(marker) {
		t.Errorf("the running command survived the stop")
	}
	if left := leftWorkspaces(t, state); len(left) > 0 {
		t.Errorf("workspaces left behind: %v", left)
	}
}

// leftWorkspaces lists the host backend's workspaces still under state.
func leftWorkspaces(t *testing.T, state string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(state, "host"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		// "@state" holds the backend's session records, not a workspace.
		if !strings.HasPrefix(e.Name(), "@") {
			names = append(names, e.Name())
		}
	}
	return names
}

// SIGTERM stops `wai serve --http` within 2 s however its clients left:
// one that left without DELETE or a stream, one that still holds its
// stream open, one whose five-minute command is running. Every workspace
// is removed and the command killed. It used to wait forever.
func TestServeHTTPStopsOnSIGTERM(t *testing.T) {
	e, _ := toolsEnv(t, "shell", "vfs")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const token = "stop-test-token-0123456789"
	s := startServe(t, ctx, e, []string{"WAI_MCP_TOKEN=" + token}, "--http", "127.0.0.1:0")

	gone := mcptest.Connect(t, ctx, s.url, mcptest.Bearer{Token: token, NoStream: true})
	listening := mcptest.Connect(t, ctx, s.url, mcptest.Bearer{Token: token})
	busy := mcptest.Connect(t, ctx, s.url, mcptest.Bearer{Token: token, NoStream: true})
	for _, cs := range []*mcp.ClientSession{gone, listening} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"file_path": "f.txt", "content": "x"}})
		if err != nil || res.IsError {
			t.Fatalf("write_file: %v %+v", err, res)
		}
	}
	const marker = "sleep 301.7"
	go func() {
		_, _ = busy.CallTool(ctx, &mcp.CallToolParams{Name: "shell_execute", Arguments: map[string]any{"command": strings.Fields(marker)}})
	}()
	waitForProcess(t, marker)
	if n := len(leftWorkspaces(t, e.state)); n != 3 {
		t.Fatalf("%d workspaces before the stop, want 3", n)
	}

	took, code := s.stop(syscall.SIGTERM)
	if code != exitOK {
		t.Errorf("wai serve after SIGTERM: status %d, want %d; stderr:\n%s", code, exitOK, s.errText())
	}
	if took > 2*time.Second {
		t.Errorf("wai serve took %s to exit after SIGTERM, want at most 2 s", took.Round(time.Millisecond))
	}
	t.Logf("exited %s after SIGTERM", took.Round(time.Millisecond))
	checkStopped(t, marker, e.state)
}

// Over stdio: a malformed line gets -32700 and the next request is
// answered (the SDK's transport ended wai, workspace and all, printing
// null); SIGTERM then stops wai within 2 s, killing the running command.
func TestServeStdioBadLineThenSIGTERM(t *testing.T) {
	e, _ := toolsEnv(t, "shell", "vfs")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := e.command(ctx, "serve", "--config", e.config)
	cmd.Stdin = nil
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	answer := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("wai serve ended its output; stderr:\n%s", string(stderr.Bytes()))
		}
		var v map[string]any
		if err := json.Unmarshal(lines.Bytes(), &v); err != nil {
			t.Fatalf("not a JSON object: %q", lines.Text())
		}
		return v
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if v := answer(); v["result"] == nil {
		t.Fatalf("initialize: %v", v)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"`)
	if v := answer(); v["error"] == nil || v["error"].(map[string]any)["code"] != float64(-32700) {
		t.Fatalf("a malformed line: want a -32700 error, got %v", v)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{"file_path":"kept.txt","content":"x"}}}`)
	if v := answer(); v["id"] != float64(3) || v["result"] == nil {
		t.Fatalf("the request after the malformed line: %v", v)
	}
	const marker = "sleep 302.3"
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"shell_execute","arguments":{"command":["sleep","302.3"]}}}`)
	waitForProcess(t, marker)

	exited := make(chan error, 1)
	go func() {
		for lines.Scan() {
		}
		exited <- cmd.Wait()
	}()
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("wai serve took %s to exit after SIGTERM, want at most 2 s", took.Round(time.Millisecond))
		}
		if err != nil {
			t.Errorf("wai serve after SIGTERM: %v; stderr:\n%s", err, string(stderr.Bytes()))
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("wai serve did not exit after SIGTERM; stderr:\n%s", string(stderr.Bytes()))
	}
	checkStopped(t, marker, e.state)
}

// A second signal ends wai at once while the first stop waits on a
// command that ignores SIGTERM for its 30 s kill grace.
func TestServeSecondSignalExitsAtOnce(t *testing.T) {
	e, _ := toolsEnv(t, "shell", "vfs")
	f, err := os.OpenFile(e.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("\n[backends.host]\nkill_grace = \"30s\"\n")
	f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const token = "signal-test-token-0123456789"
	s := startServe(t, ctx, e, []string{"WAI_MCP_TOKEN=" + token}, "--http", "127.0.0.1:0")
	cs := mcptest.Connect(t, ctx, s.url, mcptest.Bearer{Token: token, NoStream: true})
	const marker = "sleep 303.1"
	t.Cleanup(func() { _ = exec.Command("pkill", "-KILL", "-f", marker).Run() })
	go func() {
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell_execute", Arguments: map[string]any{
			"command": []string{"sh", "-c", "trap '' TERM; exec " + marker}}})
	}()
	waitForProcess(t, marker)

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The first stop is under way once the command got its SIGTERM; it
	// now waits out the grace. Give the signal a moment to land.
	time.Sleep(time.Second)
	select {
	case err := <-s.exited:
		t.Fatalf("wai serve exited on the first signal while a command ignored SIGTERM (%v): the test proves nothing", err)
	default:
	}
	took, code := s.stop(syscall.SIGTERM)
	if code != exitInterrupted {
		t.Errorf("after a second signal: status %d, want %d; stderr:\n%s", code, exitInterrupted, s.errText())
	}
	if took > 5*time.Second {
		t.Errorf("wai serve took %s to exit after the second signal", took.Round(time.Millisecond))
	}
	if !strings.Contains(s.errText(), "second signal") {
		t.Errorf("no word on stderr about the second signal:\n%s", s.errText())
	}
}
