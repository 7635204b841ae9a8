package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wai-dev/wai/internal/syncbuf"
)

// An MCP client process that dies while a call runs leaves wai serve
// writing a progress notification to a pipe nobody reads. wai used to die
// of SIGPIPE there (status 141) with no cleanup: the workspace and the
// running command were left behind. It must end as when an idle client
// leaves: status 0, the command killed, the workspace removed.
func TestServeStdioClientDiesMidCall(t *testing.T) {
	t.Parallel()
	e, _ := toolsEnv(t, "shell")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The client is its own process, as an agent is: it holds the other
	// ends of wai's stdin and stdout, sends its requests and never reads
	// the answers, so killing it closes both pipes at once.
	toWai, fromClient, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromWai, toClient, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	const marker = "sleep 304.9"
	reqs := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"dies","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"p"},"name":"shell_execute","arguments":{"command":["sleep","304.9"]}}}`,
	}, "\n") + "\n"
	client := exec.CommandContext(ctx, "sh", "-c", `printf '%s' "$REQS"; exec sleep 600`)
	client.Env = append(os.Environ(), "REQS="+reqs)
	client.Stdin, client.Stdout = fromWai, fromClient

	serve := e.command(ctx, "serve", "--config", e.config)
	serve.Stdin, serve.Stdout = toWai, toClient
	var stderr syncbuf.Buffer
	serve.Stderr = &stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Kill() })
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Process.Kill() })
	// Only the two processes hold the pipes now.
	for _, f := range []*os.File{toWai, fromClient, fromWai, toClient} {
		f.Close()
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()

	// Once the command runs, wai writes a progress notification every
	// second until the call ends; the EOF of the dead client's stdin does
	// not end the call (wai answers what a client sent before it stopped
	// sending), so the next notification meets the dead pipe.
	waitForProcess(t, marker)
	if err := client.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = client.Wait()

	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("wai serve was killed by %v when its client died mid-call; stderr:\n%s", ws.Signal(), stderr.Bytes())
			}
		}
		if err != nil {
			t.Errorf("wai serve after its client died: %v; stderr:\n%s", err, stderr.Bytes())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("wai serve did not exit within 30 s of its client dying mid-call; stderr:\n%s", stderr.Bytes())
	}
	checkStopped(t, marker, e.state)
}
