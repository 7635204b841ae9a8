package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// A background job started in one MCP call of `wai serve` is polled and
// cancelled in later calls, and a second one is gone when the session
// closes (the client leaves). Real binary, real Wasm tool, official SDK
// client over stdio, host backend.
func TestServeJobsAcrossCalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "jobs.wasm"), plugbuild.Build(t, "tools/jobs"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "plugin_dir = \""+dir+"\"\nbundled_tools = [\"jobs\"]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := e.serveStdio(ctx, "jobs-test")
	defer cs.Close()
	callJSON := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if res.IsError {
			t.Fatalf("%s: error result %+v", tool, res.Content)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: structured content %s: %v", tool, b, err)
		}
		return m
	}

	first, second := marker(t), marker(t)
	// The markers travel in the jobs' environment, where processesWith
	// finds every process of their trees.
	started := callJSON("job_start", map[string]any{"command": []string{"sh", "-c", "echo started; sleep 600"},
		"env": map[string]string{"WAI_TEST_MARKER": first}})
	id, _ := started["id"].(string)
	if id == "" || started["state"] != "running" {
		t.Fatalf("job_start: %v", started)
	}
	// Poll in later calls until the output is there, each from the last offset.
	var out strings.Builder
	next := 0.0
	for !strings.Contains(out.String(), "started\n") {
		st := callJSON("job_status", map[string]any{"id": id, "stdout_offset": next})
		if st["state"] != "running" {
			t.Fatalf("job_status: %v, want running", st)
		}
		so, _ := st["stdout"].(map[string]any)
		text, _ := so["text"].(string)
		out.WriteString(text)
		next, _ = so["next"].(float64)
		if ctx.Err() != nil {
			t.Fatal("no output from the job")
		}
		time.Sleep(50 * time.Millisecond)
	}
	listed := callJSON("job_list", map[string]any{})
	if jobs, _ := listed["jobs"].([]any); len(jobs) != 1 {
		t.Errorf("job_list: %v, want the one job", listed)
	}
	if len(processesWith(t, first)) == 0 {
		t.Fatal("the running job's processes are not found by their marker: the checks below would prove nothing")
	}
	if got := callJSON("job_cancel", map[string]any{"id": id}); got["state"] != "cancelled" {
		t.Errorf("job_cancel: %v", got)
	}
	if st := callJSON("job_status", map[string]any{"id": id}); st["state"] != "cancelled" {
		t.Errorf("job_status after cancel: %v", st)
	}
	if left := waitGone(t, first, 5*time.Second); len(left) > 0 {
		t.Errorf("the cancelled job still runs:\n%s", strings.Join(left, "\n"))
	}

	// A second job dies with the session.
	callJSON("job_start", map[string]any{"command": []string{"sh", "-c", "sleep 600; true"},
		"env": map[string]string{"WAI_TEST_MARKER": second}})
	for len(processesWith(t, second)) < 2 {
		if ctx.Err() != nil {
			t.Fatal("the second job's processes never showed up")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cs.Close(); err != nil {
		t.Logf("closing the client: %v", err)
	}
	if left := waitGone(t, second, 30*time.Second); len(left) > 0 {
		t.Errorf("a job outlived its session:\n%s", strings.Join(left, "\n"))
	}
}
