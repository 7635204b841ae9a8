package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
)

func newRuntime(t testing.TB, opts Options) *Runtime {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = plugbuild.CompilationCacheDir(t)
	}
	r, err := NewRuntime(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(context.Background()); err != nil {
			t.Errorf("closing the runtime: %v", err)
		}
	})
	return r
}

func helloWasm(t testing.TB) []byte { return testModule(t, "examples/hello") }

// modules holds each test plugin's bytes, built once per process: every
// plugbuild.Build lists and hashes the plugin's sources again, and the
// tests load the same few plugins dozens of times.
var modules sync.Map // package dir -> []byte

func testModule(t testing.TB, pkgDir string) []byte {
	t.Helper()
	if b, ok := modules.Load(pkgDir); ok {
		return b.([]byte)
	}
	b := plugbuild.Build(t, pkgDir)
	modules.Store(pkgDir, b)
	return b
}

func loadHello(t testing.TB, r *Runtime) *Plugin {
	t.Helper()
	p, err := r.Load(context.Background(), Source{Bytes: helloWasm(t), Grants: []string{CapShell}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHelloEndToEnd(t *testing.T) {
	t.Parallel() // a runtime of its own, and no timing to keep
	r := newRuntime(t, Options{})
	p := loadHello(t, r)
	d := p.Describe()
	if d.ABI != 1 || d.Name != "hello" || d.Kind != KindTool || len(d.Tools) != 1 {
		t.Fatalf("description = %+v", d)
	}
	if got := strings.Join(d.Granted, ","); got != "log,shell" {
		t.Errorf("granted = %s, want log,shell", got)
	}
	var schema map[string]any
	if err := json.Unmarshal(d.Tools[0].InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if req, _ := schema["required"].([]any); len(req) != 1 || req[0] != "name" {
		t.Errorf("schema required = %v, want [name]", schema["required"])
	}
	if d.Tools[0].Annotations == nil || !d.Tools[0].Annotations.ReadOnlyHint {
		t.Errorf("annotations = %+v, want read-only", d.Tools[0].Annotations)
	}

	env := &fakeEnv{}
	res, err := p.CallTool(context.Background(), env, ToolCall{Tool: "hello", Params: json.RawMessage(`{"name":"Ada","shout":true}`), Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Message != "HELLO, ADA" {
		t.Errorf("result = %+v, want OK HELLO, ADA", res)
	}
	var v struct {
		ExitCode int    `json:"exit_code"`
		Backend  string `json:"backend"`
	}
	if err := json.Unmarshal(res.Value, &v); err != nil || v.Backend != "fake" {
		t.Errorf("value = %s (%v), want backend fake", res.Value, err)
	}
	if len(env.execs) != 1 || strings.Join(env.execs[0].Argv, " ") != "echo hello, Ada" {
		t.Errorf("execs = %+v", env.execs)
	}

	res, err = p.CallTool(context.Background(), env, ToolCall{Tool: "hello", Params: json.RawMessage(`{"name":" "}`)})
	if err != nil || res.OK || !strings.Contains(res.Message, "name is empty") {
		t.Errorf("empty name: %+v, %v; want a failed result", res, err)
	}
	_, err = p.CallTool(context.Background(), env, ToolCall{Tool: "hello", Params: json.RawMessage(`{"name":"x","bogus":1}`)})
	if !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("unknown param: %v, want ErrInvalid", err)
	}
	_, err = p.CallTool(context.Background(), env, ToolCall{Tool: "nope"})
	if !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("unknown tool: %v, want ErrNotFound", err)
	}
}

func TestGuestErrorKeepsKind(t *testing.T) {
	t.Parallel() // a runtime of its own, and no timing to keep
	r := newRuntime(t, Options{})
	p := loadHello(t, r)
	for _, kind := range []error{backend.ErrPermission, backend.ErrInvalid, backend.ErrUnavailable, backend.ErrNotFound, backend.ErrExist} {
		env := &fakeEnv{exec: func(context.Context, backend.ExecRequest) (backend.ExecResult, error) {
			return backend.ExecResult{}, backend.Errorf(kind, "exec", "", "policy blocklist says no")
		}}
		_, err := p.CallTool(context.Background(), env, ToolCall{Tool: "hello", Params: json.RawMessage(`{"name":"x"}`)})
		var e *Error
		if !errors.Is(err, kind) || !errors.As(err, &e) || !e.Guest || !strings.Contains(err.Error(), "policy blocklist says no") {
			t.Errorf("%v: got %v, want the guest's error of that kind", kind, err)
		}
	}
	env := &fakeEnv{exec: func(context.Context, backend.ExecRequest) (backend.ExecResult, error) {
		return backend.ExecResult{}, errors.New("disk on fire")
	}}
	_, err := p.CallTool(context.Background(), env, ToolCall{Tool: "hello", Params: json.RawMessage(`{"name":"x"}`)})
	if err == nil || backend.KindOf(err) != nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("internal error: got %v, want an internal error with the message", err)
	}
}

func TestLoadChecksGrants(t *testing.T) {
	t.Parallel() // a runtime of its own, and no timing to keep
	r := newRuntime(t, Options{})
	wasm := helloWasm(t)
	_, err := r.Load(context.Background(), Source{Bytes: wasm, Name: "hello"})
	if !errors.Is(err, backend.ErrPermission) {
		t.Fatalf("no grants: %v, want ErrPermission", err)
	}
	for _, want := range []string{"wai_shell_exec", `"shell"`, `grants = ["shell"]`, "[[plugins]]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	_, err = r.Load(context.Background(), Source{Bytes: wasm, Grants: []string{CapFSRead}})
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), `grants = ["fs.read", "shell"]`) {
		t.Errorf("other grant: %v, want ErrPermission suggesting both grants", err)
	}
	p, err := r.Load(context.Background(), Source{Bytes: wasm, Bundled: true})
	if err != nil {
		t.Fatalf("bundled: %v", err)
	}
	if got := strings.Join(p.Describe().Granted, ","); got != "log,shell" {
		t.Errorf("bundled granted = %s", got)
	}
	_, err = r.Load(context.Background(), Source{Bytes: wasm, Grants: []string{"network"}})
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), `unknown capability "network"`) {
		t.Errorf("unknown grant: %v", err)
	}
}

// TestLoadChecksKind: a plugin of the other kind than its config section
// expects hears where it belongs, before any grant advice: a tool plugin
// that uses the shell, put under [[policies]], was told to add a grant
// under its [[plugins]] entry, which it did not have.
func TestLoadChecksKind(t *testing.T) {
	t.Parallel() // a runtime of its own, and no timing to keep
	r := newRuntime(t, Options{})
	_, err := r.Load(context.Background(), Source{Bytes: helloWasm(t), Name: "hello", Kind: KindPolicy})
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "is a tool plugin, not a policy plugin: list it under [[plugins]]") {
		t.Errorf("tool as a policy: %v, want ErrInvalid saying to list it under [[plugins]]", err)
	}
	// evil imports wai_shell_exec and is not granted it: the kind decides first.
	_, err = r.Load(context.Background(), Source{Bytes: testModule(t, "host/internal/wasm/testdata/evil"), Kind: KindTool,
		Config: map[string]string{"kind": KindPolicy, "declare": CapShell}})
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "is a policy plugin, not a tool plugin: list it under [[policies]]") {
		t.Errorf("policy as a tool: %v, want ErrInvalid saying to list it under [[policies]]", err)
	}
	if _, err := r.Load(context.Background(), Source{Bytes: helloWasm(t), Kind: KindTool, Grants: []string{CapShell}}); err != nil {
		t.Errorf("tool as a tool: %v", err)
	}
}

func TestLoadPinsSHA256(t *testing.T) {
	r := newRuntime(t, Options{})
	wasm := helloWasm(t)
	p, err := r.Load(context.Background(), Source{Bytes: wasm, Bundled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Load(context.Background(), Source{Bytes: wasm, Bundled: true, SHA256: strings.ToUpper(p.SHA256())}); err != nil {
		t.Errorf("matching pin: %v", err)
	}
	_, err = r.Load(context.Background(), Source{Bytes: wasm, Bundled: true, SHA256: strings.Repeat("0", 64)})
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("wrong pin: %v, want ErrInvalid naming sha256", err)
	}
}

// TestDefaults: the limits docs/ABI.md promises.
func TestDefaults(t *testing.T) {
	r := newRuntime(t, Options{})
	o := r.opts
	if o.MemoryLimitPages != 1024 || o.PoolSize != 8 || o.CallTimeout != 30*time.Second || o.CheckTimeout != 5*time.Second ||
		o.MaxOutputBytes != 4<<20 || o.MaxRequestBytes != 1<<20 {
		t.Errorf("defaults = %+v", o)
	}
	if _, err := NewRuntime(context.Background(), Options{MemoryLimitPages: 65537}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("a memory limit past 4 GiB: %v, want ErrInvalid", err)
	}
}

// TestCompilationCacheOnDisk: compiled code is kept in the cache
// directory, so the next process loads a plugin without compiling it
// again. (A hand-made module rather than a Go plugin: compiling one
// cold takes some 20 s under the race detector.)
func TestCompilationCacheOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wasm") // created by NewRuntime
	r := newRuntime(t, Options{CacheDir: dir})
	// wai_describe answers 1 without output: compiled, then refused.
	name := "wai_describe"
	wasm := append([]byte{}, wasmMagic...)
	wasm = append(wasm, 1, 5, 1, 0x60, 0, 1, 0x7f) // type 0: () -> i32
	wasm = append(wasm, 3, 2, 1, 0)                // func 0 of type 0
	wasm = append(wasm, secExport, byte(len(name)+4), 1, byte(len(name)))
	wasm = append(wasm, name...)
	wasm = append(wasm, kindFunc, 0)
	wasm = append(wasm, 10, 6, 1, 4, 0, 0x41, 1, 0x0b) // code: i32.const 1
	if _, err := r.Load(context.Background(), Source{Bytes: wasm, Bundled: true}); err == nil || strings.Contains(err.Error(), "cannot compile") {
		t.Fatalf("load = %v, want the module compiled and its describe refused", err)
	}
	files := 0
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files++
		}
		return err
	})
	if err != nil || files == 0 {
		t.Fatalf("the compilation cache %s holds %d files after a compile (%v): compiled code is not kept on disk", dir, files, err)
	}
}

// TestHostFunctionsDecodeStrictly: a field a host function does not know
// is an invalid request, not silently dropped (docs/ABI.md §4) — a
// misspelt "timeout_ms" must not run the command with the default.
func TestHostFunctionsDecodeStrictly(t *testing.T) {
	for name, h := range handlers {
		if name == "wai_containers" {
			continue // the kernel decodes it, strictly: host's TestContainersDecodeStrictly
		}
		env := &fakeEnv{}
		// Without strict decoding, a handler would go on to the fake
		// env's missing filesystem and panic: report that as the failure.
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("served the request: %v", r)
				}
			}()
			_, err = h(context.Background(), env, nil, []byte(`{"no_such_field":1}`))
			return err
		}()
		if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "no_such_field") {
			t.Errorf("%s with an unknown field: %v, want ErrInvalid naming it", name, err)
		}
		if len(env.execs) > 0 {
			t.Errorf("%s ran %v despite the bad request", name, env.execs)
		}
	}
}
