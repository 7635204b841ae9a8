//lint:file-ignore SA1019 MCP logging and roots are deprecated as of protocol 2026-07-28 (SEP-2577) but functional for at least twelve months; wai serves clients of 2025-11-25, which use them (RATIONALE.md).

package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/mcpserver"
	"github.com/wai-dev/wai/internal/plugbuild"
)

var askK sharedKernel

// allowlistKernel runs the noop plugin's "run" tool under the allowlist
// policy plugin (Wasm, through wai_check) listing only echo.
func allowlistKernel(t *testing.T) *host.Kernel {
	t.Helper()
	return askK.get(t, func() host.Config {
		cfg := hostConfig(t, noopPlugin)
		allow := filepath.Join(t.TempDir(), "allowlist.wasm")
		if err := os.WriteFile(allow, plugbuild.Build(t, "policies/allowlist"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg.Policies = []host.PolicyConfig{{Path: allow, Config: map[string]any{"commands": []string{"echo"}}}}
		return cfg
	})
}

// person answers elicitations as a test tells it to.
type person struct {
	mu     sync.Mutex
	action string // accept | decline | cancel
	answer string
	asked  []string
}

func (p *person) set(action, answer string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.action, p.answer = action, answer
}

func (p *person) times() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.asked)
}

func (p *person) handle(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, r.Params.Message)
	res := &mcp.ElicitResult{Action: p.action}
	if p.action == "accept" && p.answer != "" {
		res.Content = map[string]any{"answer": p.answer}
	}
	return res, nil
}

func allowlistServer(t *testing.T) *mcpserver.Server {
	t.Helper()
	return serve(t, allowlistKernel(t), mcpserver.Options{})
}

// A command outside the allowlist is put to the person through MCP
// elicitation: approved once it runs (and is asked again next time),
// approved for the session it runs without asking again, declined it is
// refused with the reason. Each ask is a policy.decision event.
func TestAskApprovedThroughElicitation(t *testing.T) {
	var (
		p   person
		rec logRecorder
	)
	cs := stdioClient(t, allowlistServer(t), &mcp.ClientOptions{ElicitationHandler: p.handle, LoggingMessageHandler: rec.handle})
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	uname := map[string]any{"command": []string{"uname", "-s"}}

	res := call(t, cs, "run", map[string]any{"command": []string{"echo", "listed"}})
	if res.IsError || p.times() != 0 {
		t.Fatalf("a listed command: %q, asked %d times", text(res), p.times())
	}

	p.set("accept", "allow once")
	for i := 1; i <= 2; i++ {
		res = call(t, cs, "run", uname)
		if res.IsError || !strings.Contains(text(res), "Linux") || p.times() != i {
			t.Fatalf("approved once (%d): %q, asked %d times", i, text(res), p.times())
		}
	}
	if q := p.asked[0]; !strings.Contains(q, "allowlist") || !strings.Contains(q, `"uname" is not in the allowlist`) || !strings.Contains(q, "uname -s") {
		t.Errorf("the question does not say who asks, about what and why: %q", q)
	}
	rec.waitFor(t, "an ask approved once, as an event", func(m *mcp.LoggingMessageParams) bool {
		e := event(m)
		return e["event"] == "policy.decision" && e["decision"] == "ask" && e["answer"] == "approved_once"
	})

	// An accept with no answer is no yes (the schema requires one), and
	// the model is told what came back, not that the person declined.
	p.set("accept", "")
	if res = call(t, cs, "run", uname); !res.IsError || !strings.Contains(text(res), "accepted the form without one of its answers") ||
		strings.Contains(text(res), "declined") || p.times() != 3 {
		t.Fatalf("an accept without content: %q, asked %d times; want a refusal saying no answer came back", text(res), p.times())
	}

	p.set("accept", "allow for this session")
	date := map[string]any{"command": []string{"date", "+%Y"}}
	for range 2 {
		res = call(t, cs, "run", date)
		if res.IsError || p.times() != 4 {
			t.Fatalf("approved for the session: %q, asked %d times (want 4)", text(res), p.times())
		}
	}

	p.set("decline", "")
	res = call(t, cs, "run", map[string]any{"command": []string{"hostname"}})
	if !res.IsError || !strings.Contains(text(res), "the person declined") || !strings.Contains(text(res), `"hostname" is not in the allowlist`) {
		t.Errorf("declined: want a refusal saying so; got %q", text(res))
	}
	p.set("accept", "decline")
	res = call(t, cs, "run", uname)
	if !res.IsError || !strings.Contains(text(res), "the person declined") {
		t.Errorf("the form answered decline: want a refusal; got %q", text(res))
	}
	rec.waitFor(t, "a declined ask, as a warning event", func(m *mcp.LoggingMessageParams) bool {
		e := event(m)
		return m.Level == "warning" && e["decision"] == "ask" && e["answer"] == "declined"
	})
}

// A client without elicitation cannot be asked: ask is a deny with the
// policy's reason and the config key that would allow the command.
func TestAskWithoutElicitationDenies(t *testing.T) {
	cs := stdioClient(t, allowlistServer(t), nil)
	res := call(t, cs, "run", map[string]any{"command": []string{"uname", "-s"}})
	msg := text(res)
	if !res.IsError || !strings.Contains(msg, `"uname" is not in the allowlist`) || !strings.Contains(msg, "no one can be asked") || !strings.Contains(msg, "`commands`") {
		t.Errorf("want a deny with the reason, why nobody was asked, and the config key; got %q", msg)
	}
}
