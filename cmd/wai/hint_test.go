package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

// A tool call past its deadline is kinded unavailable, but its hint must
// not send the person to look for a backend outage (the trial's 330 s
// containers exec); a real outage still points at preflight, and a limit
// (invalid) at the rule it breaks.
func TestHintTellsDeadlineFromOutage(t *testing.T) {
	deadline := &backend.Error{Kind: backend.ErrUnavailable, Op: "call", Path: "containers",
		Msg: "did not finish within its deadline of 5m30s", Err: context.DeadlineExceeded}
	if h := hint(deadline); !strings.Contains(h, "tool_timeouts") || strings.Contains(h, "preflight") {
		t.Errorf("deadline: %q, want tool_timeouts and no preflight", h)
	}
	if h := hint(backend.Errorf(backend.ErrUnavailable, "exec", "", "the Podman service does not answer")); !strings.Contains(h, "preflight") {
		t.Errorf("outage: %q, want preflight", h)
	}
	notBuilt := &backend.Error{Kind: backend.ErrUnavailable, Op: "open", Msg: "the kubernetes backend is not yet available", Err: backend.ErrNotBuiltIn}
	if h := hint(notBuilt); strings.Contains(h, "preflight") || !strings.Contains(h, "--backend") {
		t.Errorf("not built in: %q, want another backend and no preflight, which cannot help", h)
	}
	limit := backend.Errorf(backend.ErrInvalid, "jobs.start", "", "the session already runs 4 background jobs, the limit (limits.max_jobs)")
	if h := hint(limit); !strings.Contains(h, "breaks a rule") {
		t.Errorf("limit: %q, want the rule broken", h)
	}
}

// A policy that crashed or hung denies, but the command is not what to
// change: the hint sends the operator to the policy plugin. A real deny
// still points at the command and the policy's settings.
func TestHintTellsBrokenPolicyFromDeny(t *testing.T) {
	broken := &backend.Error{Kind: backend.ErrPermission, Op: "shell.exec", Path: "ls", Msg: "denied by policy p",
		Err: fmt.Errorf("%w: plugin p: check: trapped", host.ErrPolicyFailed)}
	if h := hint(broken); !strings.Contains(h, "is broken") || !strings.Contains(h, "fix the policy plugin, or remove it") || strings.Contains(h, "change the command") {
		t.Errorf("broken policy: %q, want the plugin fixed or removed, not the command changed", h)
	}
	deny := backend.Errorf(backend.ErrPermission, "shell.exec", "rm", "denied by policy p: not on fridays")
	if h := hint(deny); !strings.Contains(h, "change the command") {
		t.Errorf("deny: %q, want the command changed", h)
	}
}
