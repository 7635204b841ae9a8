package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

type fakeApprover struct {
	answer Approval
	err    error
	asked  []ApprovalRequest
}

func (f *fakeApprover) Approve(_ context.Context, req ApprovalRequest) (Approval, error) {
	f.asked = append(f.asked, req)
	return f.answer, f.err
}

// A policy's ask is settled by the session's approver: once, for the
// session (the same action is not asked again, another is), declined, no
// answer; without an approver it is a deny naming the config key.
func TestAskSettledByTheSessionsApprover(t *testing.T) {
	asks := decidingPolicy{name: "p", decide: func(r CheckRequest) Decision {
		if r.Shell == "ok" {
			return Decision{Allow: true}
		}
		return Decision{Ask: true, Reason: "`" + r.Shell + "` is new", ConfigKey: "commands"}
	}}
	k := &Kernel{cfg: DefaultConfig(), log: discardLogger()}
	k.chain = &policyChain{policies: []Policy{asks}, timeout: time.Second, log: k.log}
	s := &Session{k: k}
	run := func(shell string) error {
		return s.check(context.Background(), CheckRequest{Action: ActionShellExec, Shell: shell, Command: []string{"/bin/sh", "-c", shell}})
	}

	err := run("curl x")
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "`curl x` is new") || !strings.Contains(err.Error(), "`commands`") || !strings.Contains(err.Error(), "no one can be asked") {
		t.Errorf("without an approver: %v", err)
	}
	a := &fakeApprover{answer: ApprovalOnce}
	s.approver = a
	if err := run("ok"); err != nil || len(a.asked) != 0 {
		t.Fatalf("an allowed action asked or failed: %v, %d", err, len(a.asked))
	}
	for range 2 {
		if err := run("curl x"); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.asked) != 2 || a.asked[0].Policy != "p" || a.asked[0].Subject != "curl x" || a.asked[0].Question != "`curl x` is new" {
		t.Errorf("approved once: asked %+v", a.asked)
	}
	a.answer = ApprovalSession
	for range 2 {
		if err := run("wget y"); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.asked) != 3 {
		t.Errorf("approved for the session, yet asked %d times (want 3)", len(a.asked))
	}
	a.answer = ApprovalDeny
	if err := run("nc z"); err == nil || !strings.Contains(err.Error(), "the person declined") {
		t.Errorf("declined: %v", err)
	}
	a.answer, a.err = ApprovalOnce, errors.New("client gone")
	if err := run("nc z"); err == nil || !strings.Contains(err.Error(), "could not be asked (client gone)") {
		t.Errorf("no answer: %v", err)
	}
}
