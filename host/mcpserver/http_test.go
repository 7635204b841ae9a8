package mcpserver_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/mcpserver"
	"github.com/wai-dev/wai/host/mcpserver/mcptest"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// HTTP is never served without a token, loopback included; the scheme is
// matched in any case, and a token too short to resist guessing is never
// accepted even when the embedding program passes one.
func TestHTTPAlwaysAuthenticated(t *testing.T) {
	s := newServer(t)
	ts := httptest.NewServer(s.HTTPHandler(testToken, mcpserver.Token{Secret: "short"}))
	t.Cleanup(ts.Close)
	for _, tc := range []struct {
		authorization string
		want          int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer", http.StatusUnauthorized},
		{"Bearer wrong-token-0123456789", http.StatusUnauthorized},
		{"Bearer short", http.StatusUnauthorized},
		{"Basic " + testToken.Secret, http.StatusUnauthorized},
		{"Bearer " + testToken.Secret + "x", http.StatusUnauthorized},
		{"Bearer " + testToken.Secret, http.StatusOK},
		{"bearer " + testToken.Secret, http.StatusOK},
		{"BEARER " + testToken.Secret, http.StatusOK},
	} {
		resp := mcptest.Post(t, ts.URL, tc.authorization, "", mcptest.InitializeBody)
		if resp.StatusCode != tc.want {
			t.Errorf("Authorization %q: status %d, want %d", tc.authorization, resp.StatusCode, tc.want)
		}
		if tc.want == http.StatusUnauthorized {
			if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("Authorization %q: 401 without WWW-Authenticate: Bearer (%q)", tc.authorization, resp.Header.Get("WWW-Authenticate"))
			}
			if resp.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("Authorization %q: a refused request got a session", tc.authorization)
			}
		}
	}

	// The refusal says what to send without naming a variable the
	// operator may not use (token_env names theirs).
	resp := mcptest.Post(t, ts.URL, "", "", mcptest.InitializeBody)
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "Authorization: Bearer") || !strings.Contains(string(body), "token_env") || strings.Contains(string(body), "$WAI_MCP_TOKEN") {
		t.Errorf("401 body %q: want what to send and where tokens come from, no fixed variable name", body)
	}

	// No token at all: nothing is served.
	none := httptest.NewServer(s.HTTPHandler())
	t.Cleanup(none.Close)
	if resp := mcptest.Post(t, none.URL, "Bearer "+testToken.Secret, "", mcptest.InitializeBody); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a handler with no tokens: status %d, want 401", resp.StatusCode)
	}
}

// userKernel serves the test plugins on the host backend with a root per
// user, so where a command runs shows which user its session belongs to.
func userKernel(t *testing.T) (*host.Kernel, string) {
	t.Helper()
	cfg := hostConfig(t, noopPlugin)
	root := filepath.Join(t.TempDir(), "roots")
	cfg.StateDir = plugbuild.StateDir(t)
	cfg.Backends = map[string]map[string]any{"host": {"root": filepath.Join(root, "{user}", "{session}")}}
	return startKernel(t, cfg), root
}

// Each token opens its sessions as its user, and one user cannot reach
// another's session, even with its id.
func TestHTTPTokensMapToUsers(t *testing.T) {
	k, root := userKernel(t)
	s := serve(t, k, mcpserver.Options{})
	alice := mcpserver.Token{Secret: "alice-token-0123456789", User: "alice"}
	bob := mcpserver.Token{Secret: "bob-token-0123456789ab", User: "bob"}
	ts := httptest.NewServer(s.HTTPHandler(alice, bob))
	t.Cleanup(ts.Close)

	a := httpClient(t, ts.URL, alice.Secret)
	b := httpClient(t, ts.URL, bob.Secret)
	pwdA := strings.TrimSpace(text(call(t, a, "run", map[string]any{"shell": "echo from-alice > mine.txt; pwd"})))
	pwdB := strings.TrimSpace(text(call(t, b, "run", map[string]any{"shell": "pwd; ls"})))
	if !strings.HasPrefix(pwdA, filepath.Join(root, "alice")+"/") {
		t.Errorf("alice's session runs in %q, not under %s/alice", pwdA, root)
	}
	if !strings.HasPrefix(pwdB, filepath.Join(root, "bob")+"/") || strings.Contains(pwdB, "mine.txt") {
		t.Errorf("bob's session: %q", pwdB)
	}

	// Bob holding alice's session id gets nothing from it.
	resp := mcptest.Post(t, ts.URL, "Bearer "+bob.Secret, a.ID(),
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{"command":["cat","mine.txt"]}}}`)
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusNotFound {
		t.Errorf("bob using alice's session id: status %d, want 403 or 404", resp.StatusCode)
	}
	if got := strings.TrimSpace(text(call(t, a, "run", map[string]any{"command": []string{"cat", "mine.txt"}}))); got != "from-alice" {
		t.Errorf("alice's file: %q", got)
	}
}

// Past max_sessions a client is refused with an error naming the key, and
// a session that ends frees its place.
func TestHTTPSessionCap(t *testing.T) {
	s := serve(t, testKernel(t), mcpserver.Options{MaxSessions: 2})
	ts := httptest.NewServer(s.HTTPHandler(testToken))
	t.Cleanup(ts.Close)
	first := httpClient(t, ts.URL, testToken.Secret)
	httpClient(t, ts.URL, testToken.Secret)

	c := mcp.NewClient(&mcp.Implementation{Name: "third", Version: "1"}, nil)
	hc := &http.Client{Transport: mcptest.Bearer{Token: testToken.Secret}}
	_, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc, MaxRetries: -1}, nil)
	if err == nil || !strings.Contains(err.Error(), "mcp.max_sessions") || !strings.Contains(err.Error(), "2 MCP sessions") {
		t.Fatalf("a third session past a cap of 2: want an error naming mcp.max_sessions, got %v", err)
	}

	first.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c := mcp.NewClient(&mcp.Implementation{Name: "third", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc, MaxRetries: -1}, nil)
		if err == nil {
			cs.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a session ended, yet a new one is still refused: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// One user's clients cannot take every place: past max_sessions_per_user
// that user is refused, with the key to raise, while another user still
// gets in under the server's cap.
func TestHTTPSessionCapPerUser(t *testing.T) {
	s := serve(t, testKernel(t), mcpserver.Options{MaxSessions: 2, MaxSessionsPerUser: 1})
	alice := mcpserver.Token{Secret: "alice-token-0123456789", User: "alice"}
	bob := mcpserver.Token{Secret: "bob-token-0123456789ab", User: "bob"}
	ts := httptest.NewServer(s.HTTPHandler(alice, bob))
	t.Cleanup(ts.Close)
	httpClient(t, ts.URL, alice.Secret)

	c := mcp.NewClient(&mcp.Implementation{Name: "alice-again", Version: "1"}, nil)
	hc := &http.Client{Transport: mcptest.Bearer{Token: alice.Secret}}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc, MaxRetries: -1}, nil)
	if err == nil {
		cs.Close() // else the server's shutdown waits for it
	}
	if err == nil || !strings.Contains(err.Error(), "mcp.max_sessions_per_user") || !strings.Contains(err.Error(), "you already hold 1 MCP sessions") {
		t.Fatalf("alice's second session past a per-user cap of 1: want an error naming mcp.max_sessions_per_user, got %v", err)
	}
	httpClient(t, ts.URL, bob.Secret) // fails the test if bob is refused
}

// A client that holds its stream open is connected, however long it stays
// quiet: its session outlives the idle timeout, files and all. (The SDK's
// own session timeout closed it while the stream was open.)
func TestHTTPOpenStreamNeverIdleClosed(t *testing.T) {
	t.Parallel() // mostly idling, in a server of its own
	s := serve(t, testKernel(t), mcpserver.Options{HTTPIdleTimeout: 3 * time.Second})
	ts := httptest.NewServer(s.HTTPHandler(testToken))
	t.Cleanup(ts.Close)
	cs := httpClient(t, ts.URL, testToken.Secret)
	if res := call(t, cs, "run", map[string]any{"shell": "echo kept > keep.txt"}); res.IsError {
		t.Fatal(text(res))
	}
	time.Sleep(8 * time.Second) // more than two idle timeouts
	if res := call(t, cs, "run", map[string]any{"command": []string{"cat", "keep.txt"}}); res.IsError || strings.TrimSpace(text(res)) != "kept" {
		t.Errorf("after idling with its stream open, the client lost its file: %q", text(res))
	}
}

// Shutdown closes every session however its client left, cancelling the
// running calls: without it a client that left without DELETE kept Close
// waiting (for 30 minutes), and a running call kept its session open.
func TestShutdownClosesEverySession(t *testing.T) {
	s, err := mcpserver.New(testKernel(t), mcpserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.HTTPHandler(testToken))
	t.Cleanup(ts.Close)
	gone := mcptest.Connect(t, context.Background(), ts.URL, mcptest.Bearer{Token: testToken.Secret, NoStream: true})
	listening := httpClient(t, ts.URL, testToken.Secret)
	busy := mcptest.Connect(t, context.Background(), ts.URL, mcptest.Bearer{Token: testToken.Secret, NoStream: true})
	var dirs []string
	for _, cs := range []*mcp.ClientSession{gone, listening, busy} {
		dirs = append(dirs, strings.TrimSpace(text(call(t, cs, "run", map[string]any{"command": []string{"pwd"}}))))
	}
	called := make(chan error, 1)
	go func() {
		_, err := busy.CallTool(context.Background(), &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"shell": "sleep 304.9; echo late > late.txt"}})
		called <- err
	}()
	waitForCommand(t, "sleep 304.9")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	t.Logf("Shutdown took %s", time.Since(start).Round(time.Millisecond))
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("workspace %s outlived Shutdown", dir)
		}
	}
	if strings.Contains(psArgs(t), "sleep 304.9") {
		t.Error("the running command outlived Shutdown")
	}
	select {
	case err := <-called:
		// The answer races the session's closing: when it arrives it
		// must say why, else the transport reports the request cut off.
		if err == nil || (!strings.Contains(err.Error(), "shutting down") && !strings.Contains(err.Error(), "terminated without response")) {
			t.Errorf("the call Shutdown stopped: want an error saying the server is shutting down, or the request cut off, got %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the running call never returned")
	}
	// A client arriving now is refused.
	c := mcp.NewClient(&mcp.Implementation{Name: "late", Version: "1"}, nil)
	if _, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: mcptest.Bearer{Token: testToken.Secret}}, MaxRetries: -1}, nil); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("a client after Shutdown: want a refusal saying the server is shutting down, got %v", err)
	}
}

// waitForCommand waits until a process running args (a string no other
// test runs) is on the host: a fixed sleep is too short under load and
// too long without.
func waitForCommand(t *testing.T, args string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(psArgs(t), args) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never started", args)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func psArgs(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("ps", "-eo", "args").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A wai session closed under a connected client (an operator removed it,
// the kernel closed it) is reported plainly on the next call, not
// replaced in silence by an empty workspace; the call after that starts
// a new one.
func TestSessionClosedUnderClientIsReported(t *testing.T) {
	k := testKernel(t)
	cs := stdioClient(t, newServer(t), nil)
	before := map[string]bool{}
	for _, n := range k.Sessions() {
		before[n] = true
	}
	if res := call(t, cs, "run", map[string]any{"shell": "echo x > mine.txt"}); res.IsError {
		t.Fatal(text(res))
	}
	var name string
	for _, n := range k.Sessions() {
		if !before[n] {
			name = n
		}
	}
	ws, err := k.Session(context.Background(), name, host.SessionOptions{})
	if name == "" || err != nil {
		t.Fatalf("the client's wai session: %q %v", name, err)
	}
	if err := ws.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, "run", map[string]any{"command": []string{"cat", "mine.txt"}})
	if !res.IsError || !strings.Contains(text(res), "workspace was closed") || !strings.Contains(text(res), "files in it are gone") {
		t.Errorf("the call after its workspace was closed: want it said plainly; got %q", text(res))
	}
	if res := call(t, cs, "run", map[string]any{"shell": "ls"}); res.IsError || strings.Contains(text(res), "mine.txt") {
		t.Errorf("the call after that: want a fresh workspace; got %q", text(res))
	}
}
