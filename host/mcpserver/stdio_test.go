package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/mcpserver"
)

// rawStdio drives a server over the stdio framing byte by byte, as a
// client with bugs (or a hostile one) would.
type rawStdio struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func newRawStdio(t *testing.T, s *mcpserver.Server) *rawStdio {
	t.Helper()
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	r := &rawStdio{t: t, in: cw, lines: make(chan string, 16), done: make(chan error, 1)}
	go func() {
		r.done <- s.Run(context.Background(), &mcpserver.StdioTransport{Reader: sr, Writer: sw})
		sw.Close()
	}()
	go func() {
		sc := bufio.NewScanner(cr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	t.Cleanup(func() { cw.Close() })
	return r
}

func (r *rawStdio) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatalf("writing to the server: %v", err)
	}
}

// answer reads the next line the server writes, as JSON.
func (r *rawStdio) answer() (line string, v map[string]any) {
	r.t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			r.t.Fatalf("the server closed its output (ended: %v)", <-r.done)
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			r.t.Fatalf("the server wrote a line that is not a JSON object: %q", line)
		}
		return line, v
	case <-time.After(30 * time.Second):
		r.t.Fatal("no answer from the server within 30 s")
	}
	return "", nil
}

// wantError reads an answer and checks it is a JSON-RPC error with code
// and id (nil means null).
func (r *rawStdio) wantError(what string, code float64, id any, msgHas string) {
	r.t.Helper()
	line, v := r.answer()
	e, _ := v["error"].(map[string]any)
	if e == nil || e["code"] != code || v["id"] != id || !strings.Contains(e["message"].(string), msgHas) {
		r.t.Errorf("%s: want error %v with id %v saying %q; got %s", what, code, id, msgHas, brief(line))
	}
	if len(line) > 1024 {
		r.t.Errorf("%s: the error is %d bytes long: it echoes the input", what, len(line))
	}
}

func (r *rawStdio) wantPong(id float64) {
	r.t.Helper()
	line, v := r.answer()
	if v["id"] != id || v["result"] == nil {
		r.t.Errorf("ping %v: want its result; got %s", id, brief(line))
	}
}

func (r *rawStdio) initialize(version string) map[string]any {
	r.t.Helper()
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	line, v := r.answer()
	res, _ := v["result"].(map[string]any)
	if res == nil || res["protocolVersion"] != version {
		r.t.Fatalf("initialize: %s", brief(line))
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res
}

func brief(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// A malformed line is answered with the spec's error and the server keeps
// serving: the SDK's own stdio transport ended the session (and wai serve
// with it, workspace and all) on the first such line.
func TestStdioMalformedLinesAnswered(t *testing.T) {
	r := newRawStdio(t, newServer(t))
	r.initialize("2025-06-18")

	r.send(`{"jsonrpc":"2.0","id":2,"method":"ping"`)
	r.wantError("truncated JSON", -32700, nil, "not valid JSON")
	r.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	r.wantPong(3)

	r.send("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}")
	r.wantError("bytes that are not UTF-8", -32700, nil, "UTF-8")
	r.send(`"just a string"`)
	r.wantError("a JSON string", -32600, nil, "JSON object")
	r.send(`{"jsonrpc":"1.0","id":5,"method":"ping"}`)
	r.wantError("a wrong version tag", -32600, float64(5), "invalid request")
	r.send(`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 100000) + `","method":7}`)
	r.wantError("an invalid request with a huge id", -32600, nil, "invalid request")
	r.send(`[{"jsonrpc":"2.0","id":6,"method":"ping"}]`)
	r.wantError("a batch in 2025-06-18", -32600, nil, "no JSON-RPC batches")
	r.send(``)
	r.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	r.wantPong(7)

	// 16 MiB in one line: refused without the server holding it, and the
	// next request is served.
	go func() {
		w := bufio.NewWriterSize(r.in, 1<<16)
		_, _ = w.WriteString(`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"pad":"`)
		chunk := strings.Repeat("x", 1<<16)
		for range 256 {
			_, _ = w.WriteString(chunk)
		}
		_, _ = w.WriteString("\"}}\n")
		_ = w.Flush()
	}()
	r.wantError("a 16 MiB line", -32600, nil, "message too large")
	r.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	r.wantPong(9)

	// Tools still work after all that.
	r.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"hello","arguments":{"name":"after"}}}`)
	if line, v := r.answer(); v["id"] != float64(10) || !strings.Contains(line, "hello, after") {
		t.Errorf("a tool call after the bad lines: %s", brief(line))
	}
	r.in.Close()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run after the client closed its end: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the client closed its end")
	}
}

// MCP 2025-03-26 has JSON-RPC batches: one array in, one array out, with a
// bad member answered in place.
func TestStdioBatchWhereTheVersionHasThem(t *testing.T) {
	r := newRawStdio(t, newServer(t))
	r.initialize("2025-03-26")
	r.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}},{"jsonrpc":"1.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"hello","arguments":{"name":"batch"}}}]`)
	select {
	case line := <-r.lines:
		var answers []map[string]any
		if err := json.Unmarshal([]byte(line), &answers); err != nil || len(answers) != 3 {
			t.Fatalf("want an array of three answers; got %s", brief(line))
		}
		if answers[0]["id"] != float64(2) || answers[0]["result"] == nil {
			t.Errorf("ping in the batch: %v", answers[0])
		}
		if e, _ := answers[1]["error"].(map[string]any); answers[1]["id"] != float64(3) || e == nil || e["code"] != float64(-32600) {
			t.Errorf("the bad member: %v", answers[1])
		}
		if answers[2]["id"] != float64(4) || !strings.Contains(line, "hello, batch") {
			t.Errorf("the tool call in the batch: %v", answers[2])
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer to the batch within 30 s")
	}
	r.send(`[]`)
	r.wantError("an empty batch", -32600, nil, "empty batch")
	r.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	r.wantPong(5)
}

// The end of the input is not the end of the answers: a client that
// writes its requests and closes stdin (printf … | wai serve) gets every
// answer, the one to a call still running at EOF included. The session
// used to end at EOF and cancel that call, losing its answer about two
// times in three.
func TestStdioAnswersEverythingBeforeEOF(t *testing.T) {
	r := newRawStdio(t, newServer(t))
	r.initialize("2025-06-18")
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{"command":["sh","-c","sleep 1; echo late"]}}}`)
	r.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	r.in.Close()
	got := map[float64]string{}
	for range 2 {
		line, v := r.answer()
		id, _ := v["id"].(float64)
		got[id] = line
	}
	if !strings.Contains(got[2], "late") || got[3] == "" {
		t.Errorf("want the call's answer (with its output) and the ping's; got %v", got)
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run after EOF: %v", err)
		}
	case <-time.After(time.Minute):
		t.Errorf("the server did not end after answering everything")
	}
}
