package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/tooltest"
	"github.com/wai-dev/wai/plugins/mock"
)

// The contract's output budget is configurable: loaded as a [[plugins]] entry,
// podman_shell takes max_output_bytes from its plugin config, and ignores
// (with a warning) a value too small to hold the truncation marker.
func TestOutputBudgetFromPluginConfig(t *testing.T) {
	t.Parallel() // mock kernels of its own, beside the other tests
	dir := tooltest.PluginDir(t, "tools/podman_shell")
	for budget, wantMax := range map[any]int{200: 200, "200": 200, 10: 32 * 1024, "lots": 32 * 1024} {
		m := mock.New(mock.Options{Default: &backend.ExecResult{Stdout: strings.Repeat("o", 40000)}})
		cfg := host.DefaultConfig()
		cfg.StateDir = tooltest.StateDir(t)
		cfg.Backend = "mock"
		cfg.BundledTools = nil
		cfg.Plugins = []host.PluginConfig{{
			Path:   filepath.Join(dir, "podman_shell.wasm"),
			Grants: []string{"shell", "lifecycle"},
			Config: map[string]any{"max_output_bytes": budget},
		}}
		ctx := context.Background()
		k, err := host.New(ctx, cfg, host.WithBackend(m))
		if err != nil {
			t.Fatal(err)
		}
		res, err := k.Call(ctx, "", "podman_shell", json.RawMessage(`{"action":"exec","command":"yes o"}`))
		if err != nil {
			t.Fatal(err)
		}
		var v shellValue
		tooltest.Value(t, res, &v)
		if n := len(*v.Stdout); n > wantMax || n < wantMax-64 {
			t.Errorf("max_output_bytes %#v: stdout of 40,000 bytes came back as %d bytes, want about %d", budget, n, wantMax)
		}
		// A 200-byte budget keeps the count; the hint would take most of it.
		if err := tooltest.CheckCut(*v.Stdout, 40000, wantMax > 200); err != nil {
			t.Errorf("max_output_bytes %#v: %v", budget, err)
		}
		if err := k.Close(ctx); err != nil {
			t.Error(err)
		}
		_ = m.Close(ctx)
	}
}
