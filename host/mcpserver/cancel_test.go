package mcpserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/mcpserver/mcptest"
)

// A call the client cancels gets no response (MCP cancellation): the SDK
// answers it with error code 0, and the stdio transport drops that answer.
// Its command is killed, and the session serves on.
func TestCancelledCallGetsNoResponse(t *testing.T) {
	t.Parallel() // mostly waiting, in a session of its own
	r := newRawStdio(t, newServer(t))
	r.initialize("2025-06-18")
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{"shell":"sleep 29.3"}}}`)
	waitForCommand(t, "sleep 29.3")
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}`)
	// The cancelled call returns within moments; give it far longer before
	// the ping whose answer ends the wait, so an answer to 2 comes first.
	time.Sleep(5 * time.Second)
	r.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	for {
		line, v := r.answer()
		if v["id"] == float64(2) {
			t.Fatalf("the cancelled call was answered: %s", brief(line))
		}
		if v["id"] == float64(3) {
			break
		}
	}
	r.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run","arguments":{"shell":"ps -eo args | grep -c '[s]leep 29.3' || true"}}}`)
	line, v := r.answer()
	if v["id"] != float64(4) || !strings.Contains(line, `"text":"0`) {
		t.Errorf("after the cancel: want the sleep gone (count 0); got %s", brief(line))
	}
}

// A call whose arguments are not an object is a malformed request, answered
// with a JSON-RPC error; a well-formed call failing validation is a result.
func TestMalformedCallIsAJSONRPCError(t *testing.T) {
	r := newRawStdio(t, newServer(t))
	r.initialize("2025-06-18")
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":[1]}}`)
	r.wantError("array arguments", -32602, float64(2), "must be a JSON object")
	r.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello","arguments":{"name":7}}}`)
	if line, v := r.answer(); v["id"] != float64(3) || !strings.Contains(line, `"isError":true`) {
		t.Errorf("a validation failure: want an isError result; got %s", brief(line))
	}
}

// Over HTTP too, a call the client cancels gets no response: its POST's
// stream ends without one, and the session serves on.
func TestCancelledCallGetsNoResponseOverHTTP(t *testing.T) {
	t.Parallel() // mostly waiting, in a session of its own
	ts := httptest.NewServer(newServer(t).HTTPHandler(testToken))
	t.Cleanup(ts.Close)
	auth := "Bearer " + testToken.Secret
	init := mcptest.Post(t, ts.URL, auth, "", mcptest.InitializeBody)
	sid := init.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: status %d, no session id", init.StatusCode)
	}
	_, _ = io.ReadAll(init.Body)
	mcptest.Post(t, ts.URL, auth, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	body := make(chan string, 1)
	go func() {
		resp, err := http.DefaultClient.Do(mcptest.Request(ts.URL, auth, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{"shell":"sleep 28.7"}}}`))
		if err != nil {
			body <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body <- string(b)
	}()
	waitForCommand(t, "sleep 28.7")
	mcptest.Post(t, ts.URL, auth, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}`)
	select {
	case b := <-body:
		if strings.Contains(b, `"id":2`) {
			t.Errorf("the cancelled call was answered: %q", b)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled call's stream did not end (the command was not stopped?)")
	}
	resp := mcptest.Post(t, ts.URL, auth, sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), `"id":3`) {
		t.Errorf("after the cancel, a ping: %q", b)
	}
}
