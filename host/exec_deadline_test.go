package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// TestFitExecTimeout: an exec timeout that does not fit in the call's
// deadline (with room to stop the command and answer) is shortened and
// said so, pointing to exec_background; one that fits, or a call without
// a deadline, keeps what was asked.
func TestFitExecTimeout(t *testing.T) {
	within := func(d time.Duration) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		t.Cleanup(cancel)
		return ctx
	}
	if run, note := fitExecTimeout(context.Background(), time.Hour, false); run != time.Hour || note != "" {
		t.Errorf("no deadline: %s %q, want 1h and no note", run, note)
	}
	// The default tool deadline (5m30s) fits the default timeout.
	if run, note := fitExecTimeout(within(330*time.Second), 300*time.Second, true); run != 300*time.Second || note != "" {
		t.Errorf("300 s in 5m30s: %s %q, want it kept", run, note)
	}
	run, note := fitExecTimeout(within(330*time.Second), 600*time.Second, false)
	if run < 300*time.Second || run > 305*time.Second || !strings.Contains(note, "timeout 600 s") || !strings.Contains(note, "exec_background") {
		t.Errorf("600 s in 5m30s: %s %q, want ~305 s and a note pointing to exec_background", run, note)
	}
	run, note = fitExecTimeout(within(20*time.Second), 300*time.Second, true)
	if run < 14*time.Second || run > 15*time.Second || !strings.Contains(note, "default timeout") {
		t.Errorf("default 300 s in 20 s: %s %q, want 14-15 s (5 s margin) and a note", run, note)
	}
}

// deadlineContainers records the timeout an exec asked the backend for
// and answers as a command killed at it, with what it printed before.
type deadlineContainers struct {
	*fakeContainers
	mu  sync.Mutex
	got time.Duration
}

func (d *deadlineContainers) ExecContainer(_ context.Context, _ backend.ContainerRef, req backend.ExecRequest) (backend.ExecResult, error) {
	d.mu.Lock()
	d.got = req.Timeout
	d.mu.Unlock()
	return backend.ExecResult{Command: req.Command(), Stdout: "begin\n", ExitCode: backend.TimeoutExitCode, TimedOut: true, Duration: req.Timeout}, nil
}

// TestContainersExecFitsTheToolDeadline: through the containers tool, an
// exec asking for more than its call has left runs with what fits, and
// the answer keeps the output, says the timeout used and why, and points
// to exec_background (the trial's exec of 600 s was cut by the 5m30s
// tool deadline instead, output lost, with "the sandbox cannot serve").
func TestContainersExecFitsTheToolDeadline(t *testing.T) {
	wasmPath := filepath.Join(t.TempDir(), "containers.wasm")
	if err := os.WriteFile(wasmPath, plugbuild.Build(t, "tools/containers"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.StateDir = plugbuild.StateDir(t)
	cfg.PolicyTimeout = DefaultConfig().PolicyTimeout * 30
	cfg.Plugins = []PluginConfig{{Path: wasmPath, Grants: []string{"containers"}}}
	cfg.ToolTimeouts["containers"] = 40 * time.Second
	dc := &deadlineContainers{fakeContainers: newFakeContainers()}
	k := kernelOn(t, cfg, dc)
	res, err := k.Call(context.Background(), "tool", "containers", json.RawMessage(`{"operation":"exec","container":"box","command":"echo begin; sleep 600","timeout":600}`))
	if err != nil {
		t.Fatal(err)
	}
	dc.mu.Lock()
	got := dc.got
	dc.mu.Unlock()
	// 40 s left at most, less a 5 s margin.
	if got < 30*time.Second || got > 35*time.Second {
		t.Errorf("the backend was asked for %s, want 30-35 s to fit the 40 s deadline", got)
	}
	secs := strings.TrimSuffix(got.String(), "s")
	for _, want := range []string{"timed out after " + secs + " s", "timeout 600 s does not fit", "exec_background", "begin"} {
		if !strings.Contains(res.Message, want) {
			t.Errorf("answer lacks %q:\n%s", want, res.Message)
		}
	}
}
