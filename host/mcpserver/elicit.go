package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
)

// askTimeout bounds how long a question waits for the person: a client
// that never answers must not hold a call (and its session) forever.
const askTimeout = 10 * time.Minute

// elicitor asks the person at one client through MCP elicitation (form
// mode): a policy's ask, a command past its soft timeout.
type elicitor struct{ ss *mcp.ServerSession }

// elicitorFor returns the client's elicitor, or nil when the client does
// not offer form elicitation (then nobody can be asked).
func elicitorFor(ss *mcp.ServerSession) *elicitor {
	if ss == nil {
		return nil
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return nil
	}
	if e := ip.Capabilities.Elicitation; e.Form == nil && e.URL != nil {
		return nil // URL mode only: no form to answer in
	}
	return &elicitor{ss: ss}
}

// choose asks message with one required answer among choices (the first
// is the default); declining or cancelling the form is answered as "".
// An accept without one of the choices (no content, or an answer the
// form did not offer) is an error, not a yes: the schema requires an
// answer, and approving what nobody chose would fail open. The error
// says what came back, so the model is not told the person declined.
func (e *elicitor) choose(ctx context.Context, message, title string, choices []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"answer": map[string]any{"type": "string", "title": title, "enum": choices, "default": choices[0]},
		},
		"required": []string{"answer"},
	}
	res, err := e.ss.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: message, RequestedSchema: schema})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", fmt.Errorf("the person did not answer within %s: %w", askTimeout, ctx.Err())
		}
		return "", fmt.Errorf("asking the person through MCP elicitation: %w", err)
	}
	if res.Action != "accept" {
		return "", nil
	}
	a, _ := res.Content["answer"].(string)
	if !slices.Contains(choices, a) {
		return "", fmt.Errorf("the client accepted the form without one of its answers (got %q), which wai does not take as a yes", a)
	}
	return a, nil
}

// The answers offered for a policy's ask.
const (
	answerOnce    = "allow once"
	answerSession = "allow for this session"
	answerDecline = "decline"
)

// Approve implements host.Approver.
func (e *elicitor) Approve(ctx context.Context, req host.ApprovalRequest) (host.Approval, error) {
	what := req.Action
	if req.Subject != "" {
		what += " `" + req.Subject + "`"
	}
	msg := fmt.Sprintf("wai: policy %s asks before %s.\nWhy: %s.", req.Policy, what, req.Question)
	if req.Tool != "" {
		msg += "\n(The agent's call to " + req.Tool + ".)"
	}
	ans, err := e.choose(ctx, msg, "Allow it?", []string{answerOnce, answerSession, answerDecline})
	if err != nil {
		return host.ApprovalDeny, err
	}
	switch ans {
	case answerOnce:
		return host.ApprovalOnce, nil
	case answerSession:
		return host.ApprovalSession, nil
	}
	return host.ApprovalDeny, nil
}

// Interface guards
var _ host.Approver = (*elicitor)(nil)

// Extend implements host.Extender: a command past its soft timeout.
func (e *elicitor) Extend(ctx context.Context, req host.ExtendRequest) (bool, error) {
	extend := "extend by " + seconds(req.By)
	msg := fmt.Sprintf("wai: `%s` has run %s; %s or stop?\n(It is stopped at the hard cap, %s from now, whatever the answer; its output so far is kept either way.)",
		req.Command, seconds(req.Ran), extend, seconds(req.Left))
	ans, err := e.choose(ctx, msg, "Extend or stop?", []string{extend, "stop"})
	if err != nil {
		return false, err
	}
	return ans == extend, nil
}

// seconds renders d for a person: "60 s", "1.5 s".
func seconds(d time.Duration) string {
	return fmt.Sprintf("%g s", d.Round(100*time.Millisecond).Seconds())
}

// Interface guards
var _ host.Extender = (*elicitor)(nil)
