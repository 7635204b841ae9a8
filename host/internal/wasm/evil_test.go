package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// The malicious-plugin tests: each misbehaviour is contained, reported
// with the right error, and leaves the plugin serving other calls.

func loadEvil(t testing.TB, r *Runtime, config map[string]string) *Plugin {
	t.Helper()
	if config == nil {
		config = map[string]string{}
	}
	if _, ok := config["declare"]; !ok {
		config["declare"] = CapShell
	}
	p, err := r.Load(context.Background(), Source{Bytes: testModule(t, "host/internal/wasm/testdata/evil"), Bundled: true, Config: config})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func callEvil(ctx context.Context, p *Plugin, tool, params string) (ToolResult, error) {
	if params == "" {
		params = "{}"
	}
	return p.CallTool(ctx, &fakeEnv{}, ToolCall{Tool: tool, Params: json.RawMessage(params), Scope: scopeOf(p)})
}

// testScopes holds one Scope per plugin, so a test's calls share their
// instances as one session's calls do.
var testScopes sync.Map

func scopeOf(p *Plugin) *Scope {
	s, _ := testScopes.LoadOrStore(p, p.rt.NewScope("test"))
	return s.(*Scope)
}

// stillServes checks that the plugin answers a normal call afterwards.
func stillServes(t *testing.T, p *Plugin) {
	t.Helper()
	res, err := callEvil(context.Background(), p, "echo", `{"n":1}`)
	if err != nil || !res.OK || string(res.Value) != `{"n":1}` {
		t.Fatalf("after the misbehaviour, echo = %+v, %v", res, err)
	}
}

// live counts the plugin's instances in every pool.
func live(p *Plugin) int {
	n := 0
	for _, pl := range p.rt.openPools(p) {
		pl.mu.Lock()
		n += pl.live
		pl.mu.Unlock()
	}
	return n
}

func TestInterruptedAtDeadline(t *testing.T) {
	r := newRuntime(t, Options{})
	p := loadEvil(t, r, nil)
	for _, tool := range []string{"loop", "sleep"} {
		t.Run(tool, func(t *testing.T) {
			// The plugin keeps serving other calls while one spins.
			done := make(chan error, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			go func() { _, err := callEvil(ctx, p, tool, ""); done <- err }()
			stillServes(t, p)
			err := <-done
			elapsed := time.Since(start)
			if !errors.Is(err, ErrDeadline) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want ErrDeadline and context.DeadlineExceeded", err)
			}
			if elapsed > 3*time.Second {
				t.Errorf("took %s to stop a call with a 500ms deadline", elapsed)
			}
			stillServes(t, p)
		})
	}
	t.Run("request deadline", func(t *testing.T) {
		start := time.Now()
		_, err := p.CallTool(context.Background(), &fakeEnv{}, ToolCall{Tool: "loop", Deadline: time.Now().Add(200 * time.Millisecond)})
		if !errors.Is(err, ErrDeadline) || time.Since(start) > 3*time.Second {
			t.Errorf("err = %v after %s, want ErrDeadline soon after 200ms", err, time.Since(start))
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		_, err := callEvil(ctx, p, "loop", "")
		if !errors.Is(err, ErrDeadline) || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want ErrDeadline and context.Canceled", err)
		}
	})
	if n := live(p); n > 2 {
		t.Errorf("%d live instances: interrupted ones were not dropped", n)
	}
}

func TestTrapsDropTheInstance(t *testing.T) {
	t.Parallel() // a runtime of its own, and no timing to keep
	r := newRuntime(t, Options{})
	p := loadEvil(t, r, nil)
	for _, c := range []struct{ tool, want string }{
		{"panic", "boom: the tool exploded"},
		{"exit", "exited with code 3"},
		{"membomb", "out of memory"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			stillServes(t, p)
			before := live(p)
			_, err := callEvil(context.Background(), p, c.tool, "")
			if !errors.Is(err, ErrTrap) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrTrap mentioning %q", err, c.want)
			}
			if backend.KindOf(err) != nil {
				t.Errorf("a trap is internal, got kind %v", backend.KindOf(err))
			}
			if after := live(p); after != before-1 {
				t.Errorf("live instances %d → %d: the trapped one was not dropped", before, after)
			}
			stillServes(t, p)
		})
	}
}

func TestBadOutput(t *testing.T) {
	t.Parallel() // a runtime of its own, and no timing to keep
	// A 2 MiB cap rather than the default 4 MiB: guests copy output out 8
	// bytes per host call, slow under the race detector.
	r := newRuntime(t, Options{MaxOutputBytes: 2 << 20})
	p := loadEvil(t, r, nil)
	for _, c := range []struct{ tool, params, want string }{
		{"bigoutput", `{"mb":3}`, "over the limit of 2097152"},
		{"lieoutput", "", "not a tool result"},
		{"garbage", "", "not a tool result"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			_, err := callEvil(context.Background(), p, c.tool, c.params)
			if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrInvalid mentioning %q", err, c.want)
			}
			stillServes(t, p)
		})
	}
	// Output within the limit passes.
	res, err := callEvil(context.Background(), p, "bigoutput", `{"mb":1}`)
	if err != nil || len(res.Message) != 1<<20 {
		t.Errorf("1 MiB output: %d bytes, %v", len(res.Message), err)
	}
	// A guest too big for its memory traps rather than taking the host.
	_, err = callEvil(context.Background(), p, "bigoutput", `{"mb":1024}`)
	if !errors.Is(err, ErrTrap) {
		t.Errorf("1 GiB output: %v, want ErrTrap", err)
	}
	stillServes(t, p)
}

func TestErrorSetKeepsKind(t *testing.T) {
	r := newRuntime(t, Options{})
	p := loadEvil(t, r, nil)
	stillServes(t, p) // the session's instance exists, idle
	before := live(p)
	_, err := callEvil(context.Background(), p, "errorset", "")
	var e *Error
	if !errors.Is(err, backend.ErrPermission) || !errors.As(err, &e) || !e.Guest || e.Msg != "the guest refuses" {
		t.Fatalf("err = %#v, want the guest's permission error", err)
	}
	if live(p) != before {
		t.Errorf("a guest error dropped the instance")
	}
	stillServes(t, p)
}

func TestBadPointersIntoHostFunctions(t *testing.T) {
	r := newRuntime(t, Options{})
	p := loadEvil(t, r, nil)
	res, err := callEvil(context.Background(), p, "badptr", "")
	if err != nil {
		t.Fatal(err)
	}
	var answers []struct {
		Error *wireError `json:"error"`
	}
	if err := json.Unmarshal(res.Value, &answers); err != nil {
		t.Fatal(err)
	}
	wants := []string{"not the start of", "outside Extism memory", "not the start of", "over the limit", "bad request JSON", "outside Extism memory"}
	if len(answers) != len(wants) {
		t.Fatalf("answers = %s", res.Value)
	}
	for i, a := range answers {
		if a.Error == nil || a.Error.Kind != wireInvalid || !strings.Contains(a.Error.Message, wants[i]) {
			t.Errorf("answer %d = %+v, want an invalid error mentioning %q", i, a.Error, wants[i])
		}
	}
	stillServes(t, p)
}

func TestHostFunctionsNeedAnEnv(t *testing.T) {
	r := newRuntime(t, Options{})
	p := loadEvil(t, r, nil)
	res, err := callEvil(context.Background(), p, "shell", "")
	if err != nil || !strings.Contains(string(res.Value), `"stdout":"hi\n"`) {
		t.Fatalf("shell with an env: %+v, %v", res, err)
	}
	// Bypassing CallTool's check, a call without an Env is refused by the
	// host function itself.
	out, err := p.call(context.Background(), p.shared, "call shell", exportCall, nil, []byte(`{"tool":"shell","params":{}}`))
	if err != nil || !strings.Contains(string(out), `"kind":"permission"`) {
		t.Errorf("shell without env: %s, %v; want a permission error", out, err)
	}
}

func TestImportChecks(t *testing.T) {
	t.Parallel() // a runtime of its own, and no timing to keep
	r := newRuntime(t, Options{})
	evil := testModule(t, "host/internal/wasm/testdata/evil")
	_, err := r.Load(context.Background(), Source{Bytes: evil, Bundled: true})
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "does not declare") {
		t.Errorf("undeclared import: %v", err)
	}
	_, err = r.Load(context.Background(), Source{Bytes: evil, Grants: []string{CapFSRead}, Config: map[string]string{"declare": "shell,fs.read"}})
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "wai_shell_exec") {
		t.Errorf("ungranted import: %v", err)
	}
	for _, c := range []struct {
		name string
		wasm []byte
		kind error
		want string
	}{
		{"unknown host function", module("extism:host/user", "wai_launch_missiles"), backend.ErrInvalid, "does not offer"},
		{"http", module("extism:host/env", "http_request"), backend.ErrPermission, "no network"},
		{"foreign module", module("env", "abort"), backend.ErrInvalid, "only extism:host/user"},
		{"no describe", module("", ""), backend.ErrInvalid, "does not export wai_describe"},
		{"not wasm", []byte("\x7fELF"), backend.ErrInvalid, "not a valid WebAssembly module"},
		{"invalid body", exportsMissingFunction(), backend.ErrInvalid, "cannot compile"},
	} {
		_, err := r.Load(context.Background(), Source{Bytes: c.wasm, Bundled: true, Name: c.name})
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %v mentioning %q", c.name, err, c.kind, c.want)
		}
	}
}

// module hand-assembles a Wasm module that imports mod.name as
// (i64) -> i64 (no import when mod is empty) and exports nothing.
func module(mod, name string) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	section := func(id byte, body []byte) {
		b = append(b, id, byte(len(body)))
		b = append(b, body...)
	}
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	section(1, []byte{1, 0x60, 1, 0x7e, 1, 0x7e}) // type 0: (i64) -> i64
	if mod != "" {
		imp := []byte{1}
		imp = append(imp, str(mod)...)
		imp = append(imp, str(name)...)
		imp = append(imp, 0, 0) // func of type 0
		section(2, imp)
	}
	return b
}

// exportsMissingFunction is a module whose import and export sections read
// fine but that exports a function it does not have.
func exportsMissingFunction() []byte {
	b := append([]byte{}, wasmMagic...)
	name := "wai_describe"
	b = append(b, secExport, byte(len(name)+4), 1, byte(len(name)))
	b = append(b, name...)
	return append(b, kindFunc, 0)
}

func TestMisbehavingDescribe(t *testing.T) {
	t.Parallel() // a runtime of its own, and no timing to keep
	// describe is bounded by CallTimeout (30 s by default), so the loop
	// gets a runtime whose deadline is short; the other modes keep the
	// default, as instantiating the module on busy cores takes its time.
	short := newRuntime(t, Options{CallTimeout: 2 * time.Second})
	r := newRuntime(t, Options{})
	evil := testModule(t, "host/internal/wasm/testdata/evil")
	for _, c := range []struct {
		mode string
		rt   *Runtime
		is   error
		want string
	}{
		{"loop", short, ErrDeadline, "interrupted"},
		{"panic", r, ErrTrap, "describe exploded"},
		{"garbage", r, backend.ErrInvalid, "not a description"},
		{"abi2", r, backend.ErrInvalid, "speaks ABI 2"},
		// The guest's own error, kind and message, not "unknown field".
		{"error", r, backend.ErrInvalid, "describe: no pdk.Declare in the plugin's init"},
	} {
		start := time.Now()
		_, err := c.rt.Load(context.Background(), Source{Bytes: evil, Bundled: true, Config: map[string]string{"describe": c.mode}})
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("describe %s: %v, want %v mentioning %q", c.mode, err, c.is, c.want)
		}
		if c.rt == short && time.Since(start) > 20*time.Second {
			t.Errorf("describe %s was stopped after %s, not at its 2 s deadline", c.mode, time.Since(start))
		}
	}
}

func TestMisbehavingPolicy(t *testing.T) {
	r := newRuntime(t, Options{CheckTimeout: 300 * time.Millisecond})
	req := CheckRequest{Action: ActionShellExec, Command: []string{"rm", "-rf", "/"}, Session: "s1"}
	for _, c := range []struct {
		mode string
		is   error
	}{
		{"loop", ErrDeadline},
		{"panic", ErrTrap},
		{"garbage", backend.ErrInvalid},
	} {
		p := loadEvil(t, r, map[string]string{"kind": "policy", "check": c.mode})
		start := time.Now()
		d, err := p.Check(context.Background(), req)
		if !errors.Is(err, c.is) || d.Allow {
			t.Errorf("check %s: %+v, %v; want no decision and %v", c.mode, d, err, c.is)
		}
		if time.Since(start) > 3*time.Second {
			t.Errorf("check %s took %s", c.mode, time.Since(start))
		}
	}
	p := loadEvil(t, r, map[string]string{"kind": "policy", "check": "deny"})
	d, err := p.Check(context.Background(), req)
	if err != nil || d.Allow || d.Reason != "evil denies rm -rf /" {
		t.Errorf("deny: %+v, %v", d, err)
	}
	if _, err := p.CallTool(context.Background(), &fakeEnv{}, ToolCall{Tool: "echo"}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("CallTool on a policy: %v, want ErrInvalid", err)
	}
	p = loadEvil(t, r, map[string]string{"kind": "policy"})
	if d, err := p.Check(context.Background(), req); err != nil || !d.Allow {
		t.Errorf("allow: %+v, %v", d, err)
	}
}

func TestClosedPlugin(t *testing.T) {
	r := newRuntime(t, Options{})
	p := loadEvil(t, r, nil)
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := callEvil(context.Background(), p, "echo", "")
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("call after close: %v, want ErrUnavailable", err)
	}
}

// TestHammer: 64 goroutines share one pooled plugin; every answer must be
// the one to its own question.
func TestHammer(t *testing.T) {
	t.Parallel() // a runtime of its own, and no timing to keep
	r := newRuntime(t, Options{PoolSize: 8})
	p := loadEvil(t, r, nil)
	const workers, calls = 64, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				params := fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)
				res, err := callEvil(context.Background(), p, "echo", params)
				if err != nil || string(res.Value) != params {
					errs <- fmt.Errorf("worker %d call %d: %s, %v", w, i, res.Value, err)
					return
				}
				// 8 for the session, 1 kept from describe.
				if n := live(p); n > 8+1 {
					errs <- fmt.Errorf("%d live instances, over the session's cap of 8", n)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestGuestSeesNoHostSystem: WASI gives a plugin no preopened directory
// and no environment, so the only way out is a granted host function.
func TestGuestSeesNoHostSystem(t *testing.T) {
	r := newRuntime(t, Options{})
	p := loadEvil(t, r, nil)
	res, err := callEvil(context.Background(), p, "escape", "")
	if err != nil || !res.OK {
		t.Fatalf("escape: %+v, %v", res, err)
	}
	var got map[string]string
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatal(err)
	}
	for _, attempt := range []string{"read /etc/passwd", "read /proc/self/environ", "read etc/passwd", "list /", "list .", "write /tmp/wai-evil-escape"} {
		switch r, ok := got[attempt]; {
		case !ok:
			t.Errorf("%s: not attempted (%v)", attempt, got)
		case r == "ok":
			t.Errorf("%s: the guest reached the host's filesystem", attempt)
		}
	}
	if got["environment"] != "empty" {
		t.Errorf("the guest sees an environment: %s", got["environment"])
	}
	if _, err := os.Stat("/tmp/wai-evil-escape"); err == nil {
		t.Errorf("the guest wrote /tmp/wai-evil-escape on the host")
	}
}

// TestMemoryCap: a guest gets the default 64 MiB and not a page more.
// (Without the cap a guest could grow to the 4 GiB Wasm allows.)
func TestMemoryCap(t *testing.T) {
	t.Parallel() // a runtime of its own, and no timing to keep
	r := newRuntime(t, Options{})
	p := loadEvil(t, r, nil)
	res, err := callEvil(context.Background(), p, "membomb", `{"mb":16}`)
	if err != nil || string(res.Value) != "16" {
		t.Fatalf("16 MiB under a 64 MiB cap: %+v, %v", res, err)
	}
	_, err = callEvil(context.Background(), p, "membomb", `{"mb":96}`)
	if !errors.Is(err, ErrTrap) || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("96 MiB under a 64 MiB cap: %v, want a trap for running out of memory", err)
	}
	stillServes(t, p)
}
