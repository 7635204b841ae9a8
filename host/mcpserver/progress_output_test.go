package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A command's output reaches the client in progress notifications while
// the tool call runs: the command (run by a Wasm tool through the kernel)
// prints a line, then waits for a file the test creates only when a
// notification carried that line. Without a progress token the same call
// gets no notification at all.
func TestProgressCarriesOutputLines(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	var (
		mu   sync.Mutex
		msgs []string
		once sync.Once
	)
	cs := stdioClient(t, newServer(t), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			msgs = append(msgs, r.Params.Message)
			seen := strings.Join(msgs, "\n")
			mu.Unlock()
			// Both streams' lines, which may come in separate messages:
			// on the first alone, a loaded machine could end the command
			// before the other reached a progress message.
			if strings.Contains(seen, "alpha-line") && strings.Contains(seen, "beta-line") {
				once.Do(func() { _ = os.WriteFile(gate, nil, 0o644) })
			}
		},
	})
	shell := "echo alpha-line; echo beta-line >&2; while [ ! -e " + gate + " ]; do sleep 0.05; done; echo done"
	params := &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"shell": shell}}
	params.SetProgressToken("out")
	// Bounded: a line that never reaches a progress message leaves the
	// gate shut and the command waiting.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("call: %v %+v (progress messages %q)", err, res, msgs)
	}
	mu.Lock()
	got := strings.Join(msgs, "\n---\n")
	mu.Unlock()
	if !strings.Contains(got, "alpha-line") || !strings.Contains(got, "beta-line") {
		t.Errorf("progress messages %q lack the command's lines", got)
	}

	// No token: nothing is sent (the gate exists, so the command ends).
	mu.Lock()
	msgs = nil
	mu.Unlock()
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"shell": "echo x; sleep 0.5"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(msgs) != 0 {
		t.Errorf("progress notifications without a progress token: %q", msgs)
	}
}
