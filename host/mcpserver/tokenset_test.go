package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/config"
	"github.com/wai-dev/wai/host/mcpserver"
	"github.com/wai-dev/wai/host/mcpserver/mcptest"
	"github.com/wai-dev/wai/internal/atomicfile"
	"github.com/wai-dev/wai/internal/syncbuf"
)

// A token file rewritten while the server runs takes effect without a
// restart: the old token is refused, the new one accepted. A token file
// others can read fails closed, with a line on the log saying why, and the
// other users' tokens keep working throughout. The old token used to keep
// working and the new one got 401 until a restart.
func TestHTTPTokenFileRotation(t *testing.T) {
	s := newServer(t)
	const (
		oldAlice = "alice-old-token-0123456789"
		newAlice = "alice-new-token-0123456789"
		bob      = "bob-inline-token-0123456789"
	)
	file := filepath.Join(t.TempDir(), "alice.token")
	if err := os.WriteFile(file, []byte(oldAlice+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := mcpserver.LoadTokens(config.MCP{Tokens: []config.MCPToken{
		{TokenFile: file, User: "alice"}, {Token: bob, User: "bob"},
	}}, "", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	ts.Log = &log
	srv := httptest.NewServer(s.HTTPHandlerFor(ts))
	t.Cleanup(srv.Close)
	status := func(token string) int {
		resp := mcptest.Post(t, srv.URL, "Bearer "+token, "", mcptest.InitializeBody)
		resp.Body.Close()
		return resp.StatusCode
	}
	// until waits for token to get want: a file's change is seen within
	// mcpserver.TokenRecheck, and a loaded machine is given plenty more.
	until := func(token string, want int, why string) {
		t.Helper()
		for deadline := time.Now().Add(30 * mcpserver.TokenRecheck); status(token) != want; {
			if time.Now().After(deadline) {
				t.Fatalf("%s: still not %d; log:\n%s", why, want, log.Bytes())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, tok := range []string{oldAlice, bob} {
		if got := status(tok); got != http.StatusOK {
			t.Fatalf("before the rotation: status %d, want 200", got)
		}
	}
	if got := status(newAlice); got != http.StatusUnauthorized {
		t.Fatalf("the new token before it is written: status %d, want 401", got)
	}
	// A session alice opened before the rotation is still hers after it.
	resp := mcptest.Post(t, srv.URL, "Bearer "+oldAlice, "", mcptest.InitializeBody)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")

	if err := atomicfile.Write(file, []byte(newAlice+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	until(oldAlice, http.StatusUnauthorized, "the rotated-out token")
	if got := status(newAlice); got != http.StatusOK {
		t.Errorf("the new token after the rotation: status %d, want 200; log:\n%s", got, log.Bytes())
	}
	if got := status(bob); got != http.StatusOK {
		t.Errorf("another user's token after the rotation: status %d, want 200", got)
	}
	const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	for token, want := range map[string]int{newAlice: http.StatusAccepted, bob: http.StatusForbidden} {
		resp := mcptest.Post(t, srv.URL, "Bearer "+token, session, initialized)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("alice's session with the token of user %q: status %d, want %d", token[:strings.Index(token, "-")], resp.StatusCode, want)
		}
	}
	if want := "mcp.tokens[0] (user alice): the token file " + file + " changed"; !strings.Contains(string(log.Bytes()), want) {
		t.Errorf("log %q: want %q", log.Bytes(), want)
	}

	// Made readable by others: it may have leaked, so it fails closed.
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	until(newAlice, http.StatusUnauthorized, "a token file others can read")
	if got := status(bob); got != http.StatusOK {
		t.Errorf("another user's token while alice's file is refused: status %d, want 200", got)
	}
	if want := "mode 0644"; !strings.Contains(string(log.Bytes()), want) || !strings.Contains(string(log.Bytes()), "refused until the file is fixed") {
		t.Errorf("log %q: want the mode and that the token is refused", log.Bytes())
	}
}
