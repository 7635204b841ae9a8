//lint:file-ignore SA1019 MCP logging and roots are deprecated as of protocol 2026-07-28 (SEP-2577) but functional for at least twelve months; wai serves clients of 2025-11-25, which use them (RATIONALE.md).

package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logRecorder collects a client's notifications/message.
type logRecorder struct {
	mu   sync.Mutex
	msgs []*mcp.LoggingMessageParams
}

func (l *logRecorder) handle(_ context.Context, r *mcp.LoggingMessageRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Params)
}

func (l *logRecorder) snapshot() []*mcp.LoggingMessageParams {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*mcp.LoggingMessageParams(nil), l.msgs...)
}

// waitFor waits (generously) for a message matching want.
func (l *logRecorder) waitFor(t *testing.T, what string, want func(*mcp.LoggingMessageParams) bool) *mcp.LoggingMessageParams {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range l.snapshot() {
			if want(m) {
				return m
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %s among the log notifications: %s", what, dumpLogs(l.snapshot()))
	return nil
}

func dumpLogs(ms []*mcp.LoggingMessageParams) string {
	var b strings.Builder
	for _, m := range ms {
		d, _ := json.Marshal(m.Data)
		b.WriteString("\n  " + string(m.Level) + " " + string(d))
	}
	return b.String()
}

func event(m *mcp.LoggingMessageParams) map[string]any {
	d, _ := m.Data.(map[string]any)
	return d
}

// The server advertises logging and sends the kernel's events about a
// client's calls as notifications/message: nothing before the client
// sets a level, nothing below the level it set.
func TestLoggingToTheClient(t *testing.T) {
	var rec logRecorder
	cs := stdioClient(t, newServer(t), &mcp.ClientOptions{LoggingMessageHandler: rec.handle})
	if caps := cs.InitializeResult().Capabilities; caps == nil || caps.Logging == nil {
		t.Fatalf("the server does not advertise logging: %+v", caps)
	}
	ctx := context.Background()

	call(t, cs, "run", map[string]any{"shell": "echo before"})
	if ms := rec.snapshot(); len(ms) > 0 {
		t.Errorf("log notifications before any logging/setLevel: %s", dumpLogs(ms))
	}

	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "run", map[string]any{"shell": "echo allowed"})
	res := call(t, cs, "run", map[string]any{"shell": "rm -fr /"})
	if !res.IsError {
		t.Fatalf("rm -fr / was not refused: %q", text(res))
	}
	deny := rec.waitFor(t, "policy deny at warning", func(m *mcp.LoggingMessageParams) bool {
		e := event(m)
		return m.Level == "warning" && e["event"] == "policy.decision" && e["decision"] == "deny"
	})
	if e := event(deny); e["policy"] != "blocklist" || !strings.Contains(e["subject"].(string), "rm -fr /") || deny.Logger != "wai" {
		t.Errorf("the deny's notification: %+v %v", deny, e)
	}
	for _, m := range rec.snapshot() {
		if m.Level == "debug" || m.Level == "info" || m.Level == "notice" {
			t.Errorf("a notification below the warning level the client set: %s", dumpLogs([]*mcp.LoggingMessageParams{m}))
		}
	}

	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "run", map[string]any{"shell": "echo now-debug"})
	rec.waitFor(t, "policy allow at debug", func(m *mcp.LoggingMessageParams) bool {
		e := event(m)
		return m.Level == "debug" && e["event"] == "policy.decision" && e["decision"] == "allow" && strings.Contains(e["subject"].(string), "now-debug")
	})
}
