// Package mcptest is the MCP client side that host/mcpserver's tests and
// the CLI's `wai serve --http` tests share: a client that authenticates
// with a bearer token and, like many real clients, may hold no standing
// stream open. It is imported by tests only.
package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bearer is a RoundTripper that sends Token (none when empty). With
// NoStream it answers the client's GET, its standing stream, with 405
// itself, so the client holds no stream open between calls.
type Bearer struct {
	Token    string
	NoStream bool
}

// RoundTrip sends r with the token, or refuses the standing stream.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.NoStream && r.Method == http.MethodGet {
		return &http.Response{StatusCode: http.StatusMethodNotAllowed, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	}
	if b.Token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.Token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// InitializeBody is a client's first JSON-RPC request, for raw requests
// that must reach the server's handling of a new session.
const InitializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// Request is one raw JSON-RPC POST to url with the given Authorization
// header ("" for none) and session id ("" before initialize), for tests of
// what the server does below the client: refusals, headers, cancellation.
func Request(url, authorization, session, body string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		panic(err) // only a malformed url, which is the test's own
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return req
}

// Post sends Request and returns the response, its body closed with the
// test.
func Post(t testing.TB, url, authorization, session, body string) *http.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(Request(url, authorization, session, body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// Connect opens a client session on the streamable HTTP endpoint url
// through rt, closed with the test. It never retries: a test wants the
// first failure, not a later one.
func Connect(t testing.TB, ctx context.Context, url string, rt http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// ConnectCommand starts cmd, an MCP server on stdio such as `wai serve`,
// and opens a client session on it named client. The caller closes the
// session: closing it ends the server, which a test may want to see
// happen at a moment of its choosing.
func ConnectCommand(t testing.TB, ctx context.Context, client string, cmd *exec.Cmd) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// Tools lists cs's tools by name.
func Tools(t testing.TB, ctx context.Context, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	byName := map[string]*mcp.Tool{}
	for _, tool := range listTools(t, ctx, cs) {
		byName[tool.Name] = tool
	}
	return byName
}

func listTools(t testing.TB, ctx context.Context, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return lt.Tools
}

// OutputSchemas lists cs's tools and resolves the outputSchema each must
// declare, an object schema, to validate the structured results of calls
// against. A tool without one fails the test (and is not in the map);
// a schema that does not resolve ends it. The kernel's and the CLI's
// tests hold the tools to the same rule this way.
func OutputSchemas(t testing.TB, ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, map[string]*jsonschema.Resolved) {
	t.Helper()
	tools := listTools(t, ctx, cs)
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range tools {
		if tool.OutputSchema == nil {
			t.Errorf("tool %s declares no outputSchema: give its pdk.Tool call pdk.Returns[ResultType]()", tool.Name)
			continue
		}
		b, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: outputSchema %s: %v", tool.Name, b, err)
		}
		if s.Type != "object" {
			t.Errorf("%s: outputSchema type %q, want object", tool.Name, s.Type)
		}
		if schemas[tool.Name], err = s.Resolve(nil); err != nil {
			t.Fatalf("%s: outputSchema %s does not resolve: %v", tool.Name, b, err)
		}
	}
	return tools, schemas
}
