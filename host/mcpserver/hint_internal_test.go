package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

// TestToolErrorHints: the hint under a failed call says what kind of
// trouble it is. A call past its deadline is not an outage (the trial's
// containers exec told the model "the sandbox cannot serve"), and a broken
// limit is the request's to fix, not the operator's.
func TestToolErrorHints(t *testing.T) {
	down := "the sandbox cannot serve"
	cases := []struct {
		name      string
		err       error
		want, not string
	}{
		{"deadline", &backend.Error{Kind: backend.ErrUnavailable, Op: "call", Path: "containers",
			Msg: "did not finish within its deadline of 5m30s", Err: context.DeadlineExceeded}, "exec_background", down},
		{"outage", backend.Errorf(backend.ErrUnavailable, "exec", "", "the Podman service does not answer"), down, "ran out of time"},
		{"limit", backend.Errorf(backend.ErrInvalid, "jobs.start", "", "the session already runs 4 background jobs, the limit (limits.max_jobs)"), "limits.max_jobs", down},
		{"policy", backend.Errorf(backend.ErrPermission, "exec", "", "denied"), "a policy refused", down},
		// Another command meets the same broken policy.
		{"broken policy", &backend.Error{Kind: backend.ErrPermission, Op: "exec", Msg: "denied by policy p",
			Err: fmt.Errorf("%w: no answer within 1s", host.ErrPolicyFailed)}, "tell the operator", "different command"},
	}
	for _, c := range cases {
		res := toolError(c.err)
		msg := ""
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			msg = tc.Text
		}
		if !strings.Contains(msg, c.want) || strings.Contains(msg, c.not) {
			t.Errorf("%s: %q, want %q and not %q", c.name, msg, c.want, c.not)
		}
	}
}
