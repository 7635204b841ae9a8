package wasm

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wai-dev/wai/internal/benchlat"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// Benchmarks of docs/PERFORMANCE.md. Run with
//
//	go test -run '^$' -bench . -benchmem ./host/internal/wasm/

// BenchmarkLoadFromCache is a process's first Load of a plugin whose
// compiled code is in the on-disk cache: a new Runtime, Load, Close.
func BenchmarkLoadFromCache(b *testing.B) {
	wasm := helloWasm(b)
	dir := b.TempDir()
	warm := newRuntime(b, Options{CacheDir: dir})
	if _, err := warm.Load(context.Background(), Source{Bytes: wasm, Bundled: true}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		r, err := NewRuntime(context.Background(), Options{CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Load(context.Background(), Source{Bytes: wasm, Bundled: true}); err != nil {
			b.Fatal(err)
		}
		r.Close(context.Background())
	}
}

// BenchmarkLoadCompiled is a Load in a runtime that has compiled the
// module already (a reload, or a second plugin from the same file).
func BenchmarkLoadCompiled(b *testing.B) {
	wasm := helloWasm(b)
	r := newRuntime(b, Options{})
	for b.Loop() {
		p, err := r.Load(context.Background(), Source{Bytes: wasm, Bundled: true})
		if err != nil {
			b.Fatal(err)
		}
		p.Close(context.Background())
	}
}

// BenchmarkInstantiate creates (and closes) one fresh instance: what a
// call pays when the pool has no idle instance, or after a trap.
func BenchmarkInstantiate(b *testing.B) {
	r := newRuntime(b, Options{})
	p := loadHello(b, r)
	for b.Loop() {
		in, err := p.newInstance(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		in.close(context.Background())
	}
}

// BenchmarkSessionFirstCall is a trivial tool call in a session that has
// no instance of the plugin yet: a new scope, a new instance (its memory
// metered against the budget), the call, and the scope closed with it.
// Against BenchmarkCallTool/pdk-echo it is what per-session instances cost.
func BenchmarkSessionFirstCall(b *testing.B) {
	r := newRuntime(b, Options{})
	p := loadTestdata(b, r, "echo")
	req := ToolCall{Tool: "echo", Params: json.RawMessage(`{"name":"Ada"}`)}
	env := &fakeEnv{}
	for b.Loop() {
		req.Scope = r.NewScope("bench")
		if _, err := p.CallTool(context.Background(), env, req); err != nil {
			b.Fatal(err)
		}
		req.Scope.Close()
	}
}

// BenchmarkAcquire takes an idle instance from the pool and gives it back.
func BenchmarkAcquire(b *testing.B) {
	r := newRuntime(b, Options{})
	p := loadHello(b, r)
	for b.Loop() {
		in, err := p.shared.acquire(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		p.shared.release(in)
	}
}

// interruptModes runs a benchmark with wazero's WithCloseOnContextDone on
// (wai's setting: deadlines stop guest code) and off, to show what being
// able to stop a guest costs.
func interruptModes(b *testing.B, f func(b *testing.B, r *Runtime)) {
	for _, off := range []bool{false, true} {
		name := "interruptible"
		if off {
			name = "uninterruptible"
		}
		b.Run(name, func(b *testing.B) {
			// The compilation cache keys on the setting, so one directory
			// serves both.
			f(b, newRuntime(b, Options{interruptOff: off}))
		})
	}
}

func loadTestdata(b *testing.B, r *Runtime, dir string) *Plugin {
	p, err := r.Load(context.Background(), Source{Bytes: plugbuild.Build(b, "host/internal/wasm/testdata/"+dir), Bundled: true})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkCallTool is a trivial tool call end to end through the
// runtime: JSON in, a pooled instance, the guest decoding its params and
// answering, JSON out.
func BenchmarkCallTool(b *testing.B) {
	req := ToolCall{Tool: "echo", Params: json.RawMessage(`{"name":"Ada"}`)}
	call := func(b *testing.B, p *Plugin, req ToolCall) {
		env := &fakeEnv{}
		req.Scope = p.rt.NewScope("bench") // one session: its instance stays warm
		defer req.Scope.Close()
		var lat benchlat.Ring
		for b.Loop() {
			t := time.Now()
			if _, err := p.CallTool(context.Background(), env, req); err != nil {
				b.Fatal(err)
			}
			lat.Add(time.Since(t))
		}
		lat.Report(b)
	}
	// A pdk tool answering its params.
	b.Run("pdk-echo", func(b *testing.B) {
		interruptModes(b, func(b *testing.B, r *Runtime) { call(b, loadTestdata(b, r, "echo"), req) })
	})
	// The same with go-pdk directly, without wai's pdk.
	b.Run("go-pdk-echo", func(b *testing.B) {
		interruptModes(b, func(b *testing.B, r *Runtime) { call(b, loadEvil(b, r, nil), req) })
	})
	// A pdk tool making one host-function call (wai_shell_exec, answered
	// by a fake shell).
	b.Run("pdk-hello-with-exec", func(b *testing.B) {
		interruptModes(b, func(b *testing.B, r *Runtime) {
			call(b, loadHello(b, r), ToolCall{Tool: "hello", Params: json.RawMessage(`{"name":"Ada"}`)})
		})
	})
	b.Run("pdk-echo-parallel", func(b *testing.B) {
		p := loadTestdata(b, newRuntime(b, Options{}), "echo")
		env := &fakeEnv{}
		b.RunParallel(func(pb *testing.PB) {
			req := req
			req.Scope = p.rt.NewScope("bench") // a session per goroutine
			defer req.Scope.Close()
			for pb.Next() {
				if _, err := p.CallTool(context.Background(), env, req); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkCheck is one policy check through the runtime, with a pdk
// policy.
func BenchmarkCheck(b *testing.B) {
	req := CheckRequest{Action: ActionShellExec, Command: []string{"ls", "-la", "/workspace"}, Cwd: "src", Session: "s1", Tool: "shell_execute"}
	interruptModes(b, func(b *testing.B, r *Runtime) {
		p := loadTestdata(b, r, "allow")
		var lat benchlat.Ring
		for b.Loop() {
			t := time.Now()
			d, err := p.Check(context.Background(), req)
			if err != nil || !d.Allow {
				b.Fatal(d, err)
			}
			lat.Add(time.Since(t))
		}
		lat.Report(b)
	})
}

// BenchmarkInterruptibility runs a loop-heavy guest (10 million
// iterations of an LCG) both ways.
func BenchmarkInterruptibility(b *testing.B) {
	req := ToolCall{Tool: "work", Params: json.RawMessage(`{"n":10000000}`)}
	interruptModes(b, func(b *testing.B, r *Runtime) {
		p := loadEvil(b, r, nil)
		req.Scope = r.NewScope("bench")
		defer req.Scope.Close()
		for b.Loop() {
			if _, err := p.CallTool(context.Background(), &fakeEnv{}, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkExtismOverhead splits a call's cost: Extism's fixed per-call
// work (resetting its kernel, copying the input in, looking the export up
// by name, reading error and output back) on an export that does nothing,
// against wazero calling an empty function directly.
func BenchmarkExtismOverhead(b *testing.B) {
	b.Run("extism-noop-export", func(b *testing.B) {
		interruptModes(b, func(b *testing.B, r *Runtime) {
			p := loadEvil(b, r, nil)
			in, err := p.shared.acquire(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			defer p.shared.release(in)
			input := pad8([]byte(`{"tool":"echo","params":{}}`))
			var lat benchlat.Ring
			for b.Loop() {
				t := time.Now()
				if _, _, err := in.p.CallWithContext(context.Background(), "noop", input); err != nil {
					b.Fatal(err)
				}
				lat.Add(time.Since(t))
			}
			lat.Report(b)
		})
	})
	b.Run("wazero-empty-function", func(b *testing.B) {
		ctx, mod := emptyModule(b)
		f := mod.ExportedFunction("noop")
		var lat benchlat.Ring
		for b.Loop() {
			t := time.Now()
			if _, err := f.Call(ctx); err != nil {
				b.Fatal(err)
			}
			lat.Add(time.Since(t))
		}
		lat.Report(b)
	})
	b.Run("wazero-lookup-and-call", func(b *testing.B) {
		ctx, mod := emptyModule(b)
		for b.Loop() {
			if _, err := mod.ExportedFunction("noop").Call(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// emptyModule instantiates emptyExport in a bare wazero runtime, closed
// when b ends: the floor under Extism's own overhead.
func emptyModule(b *testing.B) (context.Context, api.Module) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	b.Cleanup(func() { rt.Close(ctx) })
	mod, err := rt.Instantiate(ctx, emptyExport())
	if err != nil {
		b.Fatal(err)
	}
	return ctx, mod
}

// BenchmarkDecodeStrict decodes a typical tool answer as every call does
// (the strict decoder guards every answer and host-function request).
func BenchmarkDecodeStrict(b *testing.B) {
	out := pad8([]byte(`{"ok":true,"message":"Hello, Ada!","value":{"name":"Ada"}}`))
	b.ReportAllocs()
	for b.Loop() {
		var w wireResult
		if err := decodeStrict(out, &w); err != nil {
			b.Fatal(err)
		}
	}
}

// emptyExport is a module exporting noop: () -> i32 returning 0.
func emptyExport() []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, 1, 5, 1, 0x60, 0, 1, 0x7f)            // type: () -> i32
	b = append(b, 3, 2, 1, 0)                           // one function of type 0
	b = append(b, 7, 8, 1, 4, 'n', 'o', 'o', 'p', 0, 0) // export "noop" func 0
	b = append(b, 10, 6, 1, 4, 0, 0x41, 0, 0x0b)        // body: i32.const 0
	return b
}
