//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host/mcpserver/mcptest"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// BenchmarkServeShellExecute is a warm `shell_execute` of `true` end to end,
// as an agent sees it: the official Go SDK client drives `wai serve` (the
// binary, built with the Podman tags) over stdio. On podman the commands run
// through wai-agent (built here, given by agent_path, as bin/wai carries
// it); the host backend in the same run is the anchor. It reports the
// median as p50-ns.
//
//	go test -tags "$GOTAGS" -run '^$' -bench BenchmarkServeShellExecute -benchtime 200x ./cmd/wai/
func BenchmarkServeShellExecute(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "wai")
	agent := filepath.Join(dir, "wai-agent")
	for _, build := range []*exec.Cmd{
		exec.Command("go", "build", "-tags", podmanBuildTags, "-o", bin, "."),
		exec.Command("go", "build", "-trimpath", "-o", agent, "../wai-agent"),
	} {
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", build.Args, err, out)
		}
	}
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugins, "shell.wasm"), plugbuild.Build(b, "tools/shell"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, backendName := range []string{"podman", "host"} {
		b.Run(backendName, func(b *testing.B) {
			toml := fmt.Sprintf("backend = %q\nstate_dir = %q\nplugin_dir = %q\nbundled_tools = [\"shell\"]\n",
				backendName, b.TempDir(), plugins)
			if backendName == "podman" {
				toml += fmt.Sprintf("\n[backends.podman]\nimage = %q\nagent_path = %q\nname_prefix = %q\n",
					podmanImage(), agent, "wai-bench-mcp")
			}
			config := filepath.Join(b.TempDir(), "wai.toml")
			if err := os.WriteFile(config, []byte(toml), 0o644); err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "serve", "--config", config)
			cs := mcptest.ConnectCommand(b, ctx, "wai-bench", cmd)
			defer cs.Close()
			call := func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell_execute", Arguments: map[string]any{"command": []string{"true"}}})
				if err != nil || res.IsError {
					b.Fatalf("shell_execute: %v %+v", err, res)
				}
			}
			for range 5 { // warm: the container, the agent, the plugin instance
				call()
			}
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				call()
				times = append(times, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
		})
	}
}
