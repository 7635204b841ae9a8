package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// The containers tool as Wasm, through the kernel: its calls pass the
// policy chain, and only a granted plugin may use wai_containers.
func TestContainersToolPlugin(t *testing.T) {
	wasmPath := filepath.Join(t.TempDir(), "containers.wasm")
	if err := os.WriteFile(wasmPath, plugbuild.Build(t, "tools/containers"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.StateDir = plugbuild.StateDir(t) // the plugin compiled once, not per run
	cfg.PolicyTimeout = DefaultConfig().PolicyTimeout * 30
	cfg.Plugins = []PluginConfig{{Path: wasmPath}}
	if _, err := New(context.Background(), cfg, WithBackend(newFakeContainers())); !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), `"containers"`) {
		t.Fatalf("a third-party containers plugin without the grant: %v, want a refusal naming the grant", err)
	}
	cfg.Plugins[0].Grants = []string{"containers"}
	cfg.MaxJobs, cfg.JobMaxRuntime = 1, time.Minute // for backgroundExecCases
	jc := newJobContainers()
	fc := jc.fakeContainers
	// One backend with every optional ability the tool drives: jobs and
	// snapshots over the same fake containers.
	both := struct {
		*jobContainers
		backend.ContainerSnapshots
	}{jc, &fakeSnapshots{fakeContainers: fc, snaps: map[string]backend.SnapshotInfo{}}}
	k := kernelOn(t, cfg, both)
	ctx := context.Background()
	call := func(args string) ToolResult {
		t.Helper()
		res, err := k.Call(ctx, "tool", "containers", json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		return res
	}
	if r := call(`{"operation":"create","name":"box","env":{"A":"1"}}`); !r.OK || !strings.Contains(r.Message, "Created box") {
		t.Errorf("create: %+v", r)
	}
	if r := call(`{"operation":"exec","container":"box","command":"echo hi"}`); !r.OK || !strings.Contains(r.Message, "ran box: echo hi") {
		t.Errorf("exec: %+v", r)
	}
	if r := call(`{"operation":"create","network":"host"}`); r.OK || !strings.Contains(r.Message, "denied") || !strings.Contains(r.Message, "allow_host_network") {
		t.Errorf("host network: %+v", r)
	}
	// The schema's enum lists the operations: the kernel refuses an
	// unknown one before the tool runs (the tool refuses it too, for a
	// caller that skips the schema).
	if _, err := k.Call(ctx, "tool", "containers", json.RawMessage(`{"operation":"nope"}`)); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "exec_interactive_hint") {
		t.Errorf("unknown operation: %v", err)
	}
	if r := call(`{"operation":"destroy_all"}`); r.OK || !strings.Contains(r.Message, "confirm") {
		t.Errorf("destroy_all without confirm: %+v", r)
	}
	if r := call(`{"operation":"list"}`); !r.OK || !strings.Contains(r.Message, "box") {
		t.Errorf("list: %+v", r)
	}
	if len(fc.created) != 1 {
		t.Errorf("created %d containers, want 1 (the denied one never reaches the backend)", len(fc.created))
	}
	backgroundExecCases(t, k, jc)
	toolSnapshots(t, call)
}
