package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/mcpserver"
	"github.com/wai-dev/wai/host/mcpserver/mcptest"
	_ "github.com/wai-dev/wai/plugins/host"
)

// The kernel most tests here share: the hello example and the noop plugin.
var kernel sharedKernel

func testKernel(t *testing.T) *host.Kernel {
	t.Helper()
	return kernel.get(t, func() host.Config {
		return hostConfig(t, testPlugin{"examples/hello", []string{"shell"}}, noopPlugin)
	})
}

var testToken = mcpserver.Token{Secret: "test-token-0123456789"}

func newServer(t *testing.T) *mcpserver.Server {
	t.Helper()
	return serve(t, testKernel(t), mcpserver.Options{ProgressInterval: 200 * time.Millisecond})
}

// stdioClient connects a Go SDK client to s over a pair of pipes carrying
// the stdio framing (newline-delimited JSON-RPC), as a subprocess would.
func stdioClient(t *testing.T, s *mcpserver.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectClient(t, s, mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts))
}

// connectClient connects c to s over the stdio framing.
func connectClient(t *testing.T, s *mcpserver.Server, c *mcp.Client) *mcp.ClientSession {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background(), &mcp.IOTransport{Reader: sr, Writer: sw}) }()
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop after the client closed")
		}
	})
	return cs
}

func httpClient(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	return mcptest.Connect(t, context.Background(), url, mcptest.Bearer{Token: token})
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// text is a result's text without the line the kernel ends every
// unsandboxed result with (these tests run on the host backend).
func text(res *mcp.CallToolResult) string {
	msg, _, _ := strings.Cut(fullText(res), "\n\n[wai: this ran on the ")
	return msg
}

func TestStdioListAndCall(t *testing.T) {
	cs := stdioClient(t, newServer(t), nil)
	byName := mcptest.Tools(t, context.Background(), cs)
	hello := byName["hello"]
	if hello == nil || byName["run"] == nil || byName["noop"] == nil {
		t.Fatalf("tools: %v", byName)
	}
	if !strings.HasPrefix(hello.Description, "Greets someone from inside the workspace. ") || hello.Annotations == nil || !hello.Annotations.ReadOnlyHint {
		t.Errorf("hello: description %q, annotations %+v", hello.Description, hello.Annotations)
	}
	schema, _ := json.Marshal(hello.InputSchema)
	if !strings.Contains(string(schema), `"name"`) || !strings.Contains(string(schema), `"maxLength":80`) {
		t.Errorf("hello's schema lost its properties: %s", schema)
	}

	res := call(t, cs, "hello", map[string]any{"name": "mcp"})
	if res.IsError || text(res) != "hello, mcp" {
		t.Fatalf("hello: %+v %q", res, text(res))
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(sc), `"backend":"host"`) {
		t.Errorf("structured content: %s", sc)
	}

	// A failed result is an answer for the model: isError, its message.
	res = call(t, cs, "hello", map[string]any{"name": " "})
	if !res.IsError || !strings.Contains(text(res), "name is empty") {
		t.Errorf("failed result: %+v %q", res, text(res))
	}
	// A policy's refusal too, with the policy's reason.
	res = call(t, cs, "run", map[string]any{"shell": "rm -fr /"})
	if !res.IsError || !strings.Contains(text(res), "blocklist") {
		t.Errorf("refused command: %+v %q", res, text(res))
	}

	// A limit the command runs into inside the tool is the model's to
	// read, not a protocol error, though it is of the same kind.
	res = call(t, cs, "run", map[string]any{"shell": "echo " + strings.Repeat("x", 5000)})
	if !res.IsError || !strings.Contains(text(res), "over the limit") {
		t.Errorf("a command over the limit: %+v %q", res, text(res))
	}

	// Params a known tool's schema refuses are a tool result the model
	// reads (SEP-1303), with the field, why, and what the tool takes.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hello", Arguments: map[string]any{"name": 5}})
	if err != nil || !res.IsError || !strings.Contains(text(res), `field /name: want string, got integer 5`) || !strings.Contains(text(res), "hello takes {") {
		t.Errorf("params failing the schema: want an isError result naming the field, why, and what the tool takes; got %v %+v", err, res)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hello", Arguments: map[string]any{"name": "x", "nope": 1}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "nope") {
		t.Errorf("an unknown param: want an isError result naming it; got %v %+v", err, res)
	}
	// An unknown tool stays a JSON-RPC error.
	var rpcErr *jsonrpc.Error
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "no_such_tool") {
		t.Errorf("unknown tool: %v", err)
	}
	// A misspelt tool gets the kernel's suggestion, not the SDK's bare
	// "unknown tool".
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "helo", Arguments: map[string]any{}})
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, `did you mean "hello"?`) {
		t.Errorf("misspelt tool: want a JSON-RPC error suggesting hello, got %v", err)
	}
}

// Cancelling a call kills the command: a sleep that would outlive the test
// by far returns at once, and the marker it would write never appears.
func TestCancellationKillsCommand(t *testing.T) {
	t.Parallel() // mostly waiting, in a session of its own
	var (
		mu       sync.Mutex
		progress []float64
	)
	cs := stdioClient(t, newServer(t), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Progress)
			mu.Unlock()
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(1500 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	params := &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"shell": "sleep 31.7; echo late > marker"}}
	params.SetProgressToken("p1")
	_, err := cs.CallTool(ctx, params)
	if err == nil {
		t.Fatal("a cancelled call returned a result")
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("cancelled call took %s", el)
	}
	mu.Lock()
	n := len(progress)
	mu.Unlock()
	if n == 0 {
		t.Error("no progress notification during a 1.5 s call with a progress token")
	}
	// The session is still usable, and the killed command never finished.
	res := call(t, cs, "run", map[string]any{"shell": "sleep 1; ls"})
	if res.IsError || strings.Contains(text(res), "marker") {
		t.Errorf("after cancel: %+v %q", res, text(res))
	}
	res = call(t, cs, "run", map[string]any{"shell": "ps -eo args | grep -c '[s]leep 31.7' || true"})
	if strings.TrimSpace(text(res)) != "0" {
		t.Errorf("the cancelled sleep still runs: %q", text(res))
	}
}

func TestHTTPSessionsIsolatedAndTokenRequired(t *testing.T) {
	s := newServer(t)
	const token = "s3cret-s3cret-s3cret"
	ts := httptest.NewServer(s.HTTPHandler(mcpserver.Token{Secret: token}))
	// A cleanup, not a defer: it must run after the clients' cleanups
	// have closed their streams, or Close waits on them.
	t.Cleanup(ts.Close)

	// Without the token: 401.
	if resp := mcptest.Post(t, ts.URL, "", "", mcptest.InitializeBody); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", resp.StatusCode)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	if _, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: mcptest.Bearer{Token: "wrong"}}, MaxRetries: -1}, nil); err == nil {
		t.Error("a client with the wrong token connected")
	}

	a := httpClient(t, ts.URL, token)
	b := httpClient(t, ts.URL, token)
	if res := call(t, a, "run", map[string]any{"shell": "echo secret-a > a.txt && pwd"}); res.IsError {
		t.Fatalf("a: %q", text(res))
	}
	res := call(t, b, "run", map[string]any{"shell": "ls; pwd"})
	if res.IsError || strings.Contains(text(res), "a.txt") {
		t.Errorf("session b sees a's file: %q", text(res))
	}
	res = call(t, a, "run", map[string]any{"command": []string{"cat", "a.txt"}})
	if strings.TrimSpace(text(res)) != "secret-a" {
		t.Errorf("session a lost its file: %q", text(res))
	}

	// Closing a client closes its wai session: its workspace goes away.
	dir := strings.TrimSpace(text(call(t, a, "run", map[string]any{"command": []string{"pwd"}})))
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Fatalf("workspace %q: %v", dir, err)
	}
	a.Close()
	waitGone(t, dir, "after the client left")
}

func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		addr       string
		configured bool
		ok         bool
	}{
		{"127.0.0.1:8765", false, true},
		{"localhost:0", false, true},
		{"[::1]:80", false, true},
		{":8765", false, false},
		{"0.0.0.0:8765", false, false},
		{"0.0.0.0:8765", true, true},
		{"10.1.2.3:8765", true, true},
		{"nonsense", true, false},
	} {
		err := mcpserver.CheckListen(tc.addr, tc.configured)
		if (err == nil) != tc.ok {
			t.Errorf("CheckListen(%q, %v) = %v, want ok=%v", tc.addr, tc.configured, err, tc.ok)
		}
	}
}

// An HTTP client that vanishes without ending its session (and holds no
// stream open) loses it after the idle timeout, workspace and all: over
// HTTP that silence is the only sign it left.
func TestHTTPIdleSessionClosed(t *testing.T) {
	s := serve(t, testKernel(t), mcpserver.Options{HTTPIdleTimeout: time.Second})
	ts := httptest.NewServer(s.HTTPHandler(testToken))
	t.Cleanup(ts.Close)
	cs := mcptest.Connect(t, context.Background(), ts.URL, mcptest.Bearer{Token: testToken.Secret, NoStream: true})
	dir := strings.TrimSpace(text(call(t, cs, "run", map[string]any{"command": []string{"pwd"}})))
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("workspace %q: %v", dir, err)
	}
	waitGone(t, dir, "after the idle timeout")
}

// waitGone waits (generously: the machine may be loaded) for a workspace
// directory to be removed.
func waitGone(t *testing.T, dir, when string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("workspace %s still there %s", dir, when)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
