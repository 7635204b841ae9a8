package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wai-dev/wai/internal/benchlat"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// benchExecs are typical commands: what the chain costs on the common path.
var benchExecs = []CheckRequest{
	{Action: ActionShellExec, Command: []string{"ls", "-la"}, Session: "b"},
	{Action: ActionShellExec, Command: []string{"/bin/sh", "-c", "go test ./... && git status | head -n 20"}, Shell: "go test ./... && git status | head -n 20", Session: "b"},
	{Action: ActionShellExec, Command: []string{"rm", "-rf", "./build"}, Session: "b"},
}

func writePlugin(b *testing.B, pkg string) string {
	path := filepath.Join(b.TempDir(), filepath.Base(pkg)+".wasm")
	if err := os.WriteFile(path, plugbuild.Build(b, pkg), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

func benchKernel(b *testing.B, cfg Config, opts ...Option) *Kernel {
	cfg.StateDir = SharedStateDir
	return kernelOn(b, cfg, newFake("fake", true), opts...)
}

// BenchmarkPolicyChainExec is the default policy chain (the blocklist) on
// one exec: in-process, as the kernel runs it, and as the Wasm plugin a
// [[policies]] path would load.
func BenchmarkPolicyChainExec(b *testing.B) {
	ctx := context.Background()
	b.Run("native", func(b *testing.B) {
		cfg := DefaultConfig()
		cfg.BundledTools = []string{}
		k := benchKernel(b, cfg)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := k.chain.check(ctx, benchExecs[i%len(benchExecs)], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wasm", func(b *testing.B) {
		cfg := DefaultConfig()
		cfg.BundledTools = []string{}
		cfg.DefaultPolicies = []string{}
		cfg.Policies = []PolicyConfig{{Path: writePlugin(b, "policies/blocklist")}}
		k := benchKernel(b, cfg)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := k.chain.check(ctx, benchExecs[i%len(benchExecs)], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkToolCall is a trivial tool call end to end through the kernel,
// warm: find, validate, authorize, deadline, plugin call, result, event.
// "wasm" calls the noop test plugin; "go" a Go tool, which isolates the
// kernel's own share.
func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	params := json.RawMessage(`{}`)
	run := func(b *testing.B, k *Kernel) {
		if _, err := k.Call(ctx, "bench", "noop", params); err != nil { // warm: session, instance
			b.Fatal(err)
		}
		b.ReportAllocs()
		var lat benchlat.Ring
		for b.Loop() {
			t := time.Now()
			res, err := k.Call(ctx, "bench", "noop", params)
			if err != nil || !res.OK {
				b.Fatal(res, err)
			}
			lat.Add(time.Since(t))
		}
		lat.Report(b)
	}
	b.Run("wasm", func(b *testing.B) {
		cfg := DefaultConfig()
		cfg.BundledTools = []string{}
		cfg.Plugins = []PluginConfig{{Path: writePlugin(b, "host/testdata/noop"), Grants: []string{"shell"}}}
		run(b, benchKernel(b, cfg))
	})
	b.Run("go", func(b *testing.B) {
		cfg := DefaultConfig()
		cfg.BundledTools = []string{}
		run(b, benchKernel(b, cfg, withTools(demoTools("demo"), nil)))
	})
}
