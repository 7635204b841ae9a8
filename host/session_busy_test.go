package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/internal/wasm"
)

// TestSessionBusyKeepsItsMessage: a tool call that waited out its
// deadline for one of its session's call slots reports that, with the key
// to raise, not that the tool ran too long.
func TestSessionBusyKeepsItsMessage(t *testing.T) {
	busy := &goTools{name: "busy", tools: map[string]func(context.Context, wasm.Env, json.RawMessage) (wasm.ToolResult, error){
		// What the Wasm runtime answers when the session's slots stay taken.
		"wait": func(ctx context.Context, _ wasm.Env, _ json.RawMessage) (wasm.ToolResult, error) {
			<-ctx.Done()
			return wasm.ToolResult{}, &backend.Error{Kind: backend.ErrUnavailable, Op: "call", Path: "wait",
				Msg: "session s already runs 8 tool calls, the most limits.session_concurrent_calls allows",
				Err: fmt.Errorf("%w: %w", wasm.ErrSessionBusy, ctx.Err())}
		},
	}}
	k, _ := newKernel(t, testConfig(t), withTools(busy, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := k.Call(ctx, "s", "wait", nil)
	if !errors.Is(err, wasm.ErrSessionBusy) || !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "limits.session_concurrent_calls") {
		t.Errorf("err = %v, want the session-busy error naming limits.session_concurrent_calls", err)
	}
}
