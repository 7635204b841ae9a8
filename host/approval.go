package host

import (
	"context"
	"log/slog"
	"sync"
)

// Approval is a person's answer to a policy that asked.
type Approval int

const (
	// ApprovalDeny refuses the action (the person declined, or could not
	// be asked).
	ApprovalDeny Approval = iota
	// ApprovalOnce allows this one action.
	ApprovalOnce
	// ApprovalSession allows this action, and the same action again
	// (same policy, action and subject) for the rest of the session.
	ApprovalSession
)

func (a Approval) String() string {
	switch a {
	case ApprovalOnce:
		return "approved_once"
	case ApprovalSession:
		return "approved_for_session"
	}
	return "declined"
}

// ApprovalRequest is what a person is asked when a policy answers ask.
type ApprovalRequest struct {
	Policy string // the policy that asks
	// Question is the policy's reason for asking ("\"curl\" is not in
	// the allowlist").
	Question string
	Action   string // the action in question (shell.exec, fs.write, …)
	// Subject is what the action is about: the command, the path.
	Subject string
	Tool    string // the tool whose call caused it, if any
	Session string
}

// Approver asks a person to approve an action a policy asked about. The
// MCP server gives each client's session one that asks through MCP
// elicitation; sessions without one (the CLI, the Go API by default)
// treat ask as deny. Approve blocks until the person answers or ctx
// ends; an error means no answer, which denies.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Approval, error)
}

// approvals are the actions a person approved for a session's lifetime.
type approvals struct {
	mu      sync.Mutex
	granted map[string]bool
}

func approvalKey(policy string, req CheckRequest) string {
	return policy + "\x00" + req.Action + "\x00" + subject(req) + "\x00" + req.Script
}

func (a *approvals) has(key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.granted[key]
}

func (a *approvals) grant(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.granted == nil {
		a.granted = map[string]bool{}
	}
	a.granted[key] = true
}

// askPerson settles a policy's ask for s: an approval the person gave
// for the session, else the session's Approver, else deny. It returns
// the outcome, and the error that denies (nil when approved).
func (s *Session) askPerson(ctx context.Context, policy string, req CheckRequest, d Decision) (string, error) {
	key := approvalKey(policy, req)
	if s.approved.has(key) {
		return "approved_earlier_for_session", nil
	}
	if s.approver == nil {
		return "no_approver", askDenied(policy, req, d,
			"this policy asks a person to approve it, and no one can be asked here (the client does not support MCP elicitation, or wai runs without a client)")
	}
	ans, err := s.approver.Approve(ctx, ApprovalRequest{
		Policy: policy, Question: d.Reason, Action: req.Action, Subject: subject(req),
		Tool: req.Tool, Session: req.Session,
	})
	if err != nil {
		s.k.log.LogAttrs(ctx, slog.LevelWarn, "policy.ask_failed", slog.String("policy", policy),
			slog.String("session", req.Session), slog.String("error", err.Error()))
		return "no_answer", askDenied(policy, req, d, "the person could not be asked ("+err.Error()+")")
	}
	switch ans {
	case ApprovalSession:
		s.approved.grant(key)
		return ans.String(), nil
	case ApprovalOnce:
		return ans.String(), nil
	}
	return ans.String(), askDenied(policy, req, d, "the person declined")
}
