package mcpserver_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/mcpserver"
	"github.com/wai-dev/wai/host/mcpserver/mcptest"
	"github.com/wai-dev/wai/internal/syncbuf"
)

// A client without a standalone SSE stream that started a background job
// and went quiet is not idle: its session, its files and its job outlive
// the HTTP idle timeout while the job runs, and the session is closed as
// idle once the job ended (finding 2 of the s26 trial: after 8 s both were
// gone, "session not found").
func TestHTTPRunningJobNeverIdleClosed(t *testing.T) {
	t.Parallel() // mostly idling, in a server of its own
	k, err := host.New(context.Background(), hostConfig(t, noopPlugin, testPlugin{"tools/jobs", []string{"jobs"}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close(context.Background()) })
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := serve(t, k, mcpserver.Options{HTTPIdleTimeout: time.Second, Logger: log})
	ts := httptest.NewServer(s.HTTPHandler(testToken))
	t.Cleanup(ts.Close)
	// No standing stream: a client with one open is connected anyway.
	cs := mcptest.Connect(t, t.Context(), ts.URL, mcptest.Bearer{Token: testToken.Secret, NoStream: true})
	if res := call(t, cs, "run", map[string]any{"shell": "echo kept > keep.txt"}); res.IsError {
		t.Fatal(text(res))
	}
	job := call(t, cs, "job_start", map[string]any{"command": []string{"sleep", "1000"}, "max_runtime_seconds": 120})
	id, _ := job.StructuredContent.(map[string]any)["id"].(string)
	if job.IsError || id == "" {
		t.Fatalf("job_start: %q", text(job))
	}
	waitServerLog(t, &logs, "mcp.session.idle_jobs_run", "mcp.session.idle_close")
	if res := call(t, cs, "run", map[string]any{"command": []string{"cat", "keep.txt"}}); res.IsError || strings.TrimSpace(text(res)) != "kept" {
		t.Fatalf("after idling with a job running, the client lost its file: %q", text(res))
	}
	if res := call(t, cs, "job_cancel", map[string]any{"id": id}); res.IsError {
		t.Fatal(text(res))
	}
	// With its job ended the session is idle again, and is closed for it.
	waitServerLog(t, &logs, "mcp.session.idle_close", "")
}

// waitServerLog waits for the server to log event, failing at once if it
// logs bad ("" for none) first, and after a minute: a check comes every
// quarter of a second.
func waitServerLog(t *testing.T, logs *syncbuf.Buffer, event, bad string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		got := logs.String()
		if bad != "" && strings.Contains(got, "msg="+bad+" ") {
			t.Fatalf("the server logged %s while a job ran:\n%s", bad, got)
		}
		if strings.Contains(got, "msg="+event+" ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute; log:\n%s", event, got)
		}
	}
}
