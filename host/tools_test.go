package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/internal/wasm"
)

// goTools is a tool plugin written in Go: the kernel cannot tell it from a
// Wasm one, which is what lets these tests run without building Wasm.
type goTools struct {
	name  string
	tools map[string]func(ctx context.Context, env wasm.Env, params json.RawMessage) (wasm.ToolResult, error)
}

const runSchema = `{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"},"minItems":1},"timeout_seconds":{"type":"number","minimum":1}},"required":["command"],"additionalProperties":false}`

func (g *goTools) Describe() wasm.Description {
	d := wasm.Description{ABI: 1, Name: g.name, Kind: wasm.KindTool}
	for n := range g.tools {
		schema := `{"type":"object"}`
		if n == "run" {
			schema = runSchema
		}
		d.Tools = append(d.Tools, wasm.ToolSpec{Name: n, Description: "tool " + n, InputSchema: json.RawMessage(schema)})
	}
	return d
}

func (g *goTools) CallTool(ctx context.Context, env wasm.Env, req wasm.ToolCall) (wasm.ToolResult, error) {
	f, ok := g.tools[req.Tool]
	if !ok {
		return wasm.ToolResult{}, fmt.Errorf("no tool %s", req.Tool)
	}
	return f(ctx, env, req.Params)
}

func (g *goTools) Close(context.Context) error { return nil }

func demoTools(name string) *goTools {
	return &goTools{name: name, tools: map[string]func(context.Context, wasm.Env, json.RawMessage) (wasm.ToolResult, error){
		"run": func(ctx context.Context, env wasm.Env, params json.RawMessage) (wasm.ToolResult, error) {
			var p struct{ Command []string }
			if err := json.Unmarshal(params, &p); err != nil {
				return wasm.ToolResult{}, err
			}
			res, err := env.Shell().Execute(ctx, backend.ExecRequest{Argv: p.Command})
			if err != nil {
				return wasm.ToolResult{}, err
			}
			v, _ := json.Marshal(map[string]any{"stdout": res.Stdout, "exit_code": res.ExitCode, "session": env.Session()})
			return wasm.ToolResult{OK: res.Success(), Message: "ran", Value: v}, nil
		},
		"sleep": func(ctx context.Context, env wasm.Env, _ json.RawMessage) (wasm.ToolResult, error) {
			select {
			case <-ctx.Done():
				return wasm.ToolResult{}, ctx.Err()
			case <-time.After(10 * time.Second):
				return wasm.ToolResult{OK: true}, nil
			}
		},
		"noop": func(context.Context, wasm.Env, json.RawMessage) (wasm.ToolResult, error) {
			return wasm.ToolResult{OK: true, Message: "nothing"}, nil
		},
	}}
}

func TestCallRunsToolThroughGuardedCapabilities(t *testing.T) {
	var mu sync.Mutex
	var tools []string
	rec := &scriptedPolicy{name: "rec", check: func(_ context.Context, req CheckRequest) (Decision, error) {
		mu.Lock()
		tools = append(tools, req.Tool)
		mu.Unlock()
		return Decision{Allow: true}, nil
	}}
	k, fb := newKernel(t, testConfig(t), withTools(demoTools("demo"), nil), WithPolicy(rec))
	ctx := context.Background()

	list := k.Tools()
	if len(list) != 3 || list[0].Name != "noop" || list[1].Name != "run" || list[1].Plugin != "demo" || string(list[1].InputSchema) != runSchema {
		t.Fatalf("Tools() = %+v", list)
	}
	res, err := k.Call(ctx, "s1", "run", json.RawMessage(`{"command":["echo","hi"]}`))
	if err != nil || !res.OK {
		t.Fatalf("call: %+v, %v", res, err)
	}
	var v struct {
		Stdout  string
		Session string
	}
	if err := json.Unmarshal(res.Value, &v); err != nil || v.Stdout != "hi\n" || v.Session != "s1" {
		t.Fatalf("value %s: %v", res.Value, err)
	}
	if fb.execCount() != 1 || len(tools) != 1 || tools[0] != "run" {
		t.Fatalf("the command did not pass the policy once, naming the tool: execs %d, policy saw tools %v", fb.execCount(), tools)
	}

	_, err = k.Call(ctx, "s1", "run", json.RawMessage(`{"command":["rm","-rf","/"]}`))
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "blocklist") {
		t.Fatalf("a tool's rm -rf / was not denied by the blocklist: %v", err)
	}
	if fb.execCount() != 1 {
		t.Fatal("the denied command reached the backend")
	}
}

func TestCallValidatesParams(t *testing.T) {
	k, fb := newKernel(t, testConfig(t), withTools(demoTools("demo"), nil))
	for params, want := range map[string]string{
		`{}`:                                     "required field /command is missing",
		`{"command":"ls"}`:                       `field /command: want array, got string "ls"`,
		`{"command":[]}`:                         "command",
		`{"command":[1]}`:                        "field /command/0: want string, got integer 1",
		`{"command":["ls"],"extra":1}`:           "field /extra is not a field of this tool",
		`{"comand":["ls"]}`:                      `field /comand is not a field of this tool; did you mean "command"?`,
		`{"command":["ls"],"timeout_seconds":0}`: "timeout_seconds",
		`{"command":["ls"]`:                      `not valid JSON: unexpected end of JSON input at byte 17`,
		`{"command" ["ls"]}`:                     `invalid character '[' after object key at byte 12`,
		`[1]`:                                    "params: want object, got array [1]",
		`{"command":"ls","x":1}`:                 `run takes {"command": array of string (required), "timeout_seconds": number}`,
	} {
		_, err := k.Call(context.Background(), "v", "run", json.RawMessage(params))
		if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("params %s: want ErrInvalid mentioning %q, got %v", params, want, err)
		}
	}
	if fb.execCount() != 0 {
		t.Fatal("invalid params reached the backend")
	}
	if _, err := k.Call(context.Background(), "v", "nope", nil); !errors.Is(err, backend.ErrNotFound) || !strings.Contains(err.Error(), "noop, run, sleep") {
		t.Fatalf("unknown tool: want ErrNotFound listing the tools, got %v", err)
	}
	if _, err := k.Call(context.Background(), "v", "slep", nil); !errors.Is(err, backend.ErrNotFound) || !strings.Contains(err.Error(), `did you mean "sleep"?`) {
		t.Fatalf("misspelt tool: want ErrNotFound suggesting sleep, got %v", err)
	}
	if res, err := k.Call(context.Background(), "v", "noop", nil); err != nil || !res.OK {
		t.Fatalf("no params means {}: %+v, %v", res, err)
	}
}

func TestCallDeadlines(t *testing.T) {
	cfg := testConfig(t)
	cfg.ToolTimeouts["sleep"] = 100 * time.Millisecond
	k, _ := newKernel(t, cfg, withTools(demoTools("demo"), nil))

	timed := func(ctx context.Context) (time.Duration, error) {
		start := time.Now()
		_, err := k.Call(ctx, "d", "sleep", nil)
		return time.Since(start), err
	}
	// The configured deadline holds even when the caller allows longer.
	long, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	took, err := timed(long)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "100ms") {
		t.Fatalf("want a deadline error naming the 100ms tool timeout, got %v", err)
	}
	if took > 2*time.Second {
		t.Fatalf("the call ran %s, past its 100ms deadline", took)
	}
	// A shorter caller deadline wins: the error says which deadline ended
	// the call (a bound on the time would only measure the machine's load).
	short, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	took, err = timed(short)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "caller's deadline") || took > 2*time.Second {
		t.Fatalf("the caller's 20ms deadline did not win: %s, %v", took, err)
	}
}

func TestDuplicateToolNamesNeedAliases(t *testing.T) {
	cfg := testConfig(t)
	_, err := New(context.Background(), cfg, WithBackend(newFake("fake", true)), withTools(demoTools("a"), nil), withTools(demoTools("b"), nil))
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "plugin a and plugin b") || !strings.Contains(err.Error(), "aliases") {
		t.Fatalf("two plugins exporting the same names: want a clear error, got %v", err)
	}
	_, err = New(context.Background(), cfg, WithBackend(newFake("fake", true)), withTools(demoTools("a"), nil),
		withTools(demoTools("b"), map[string]string{"nope": "x"}))
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("an alias for a missing tool: want ErrInvalid, got %v", err)
	}
	cfg.DisabledTools = []string{"sleep"}
	k, _ := newKernel(t, cfg, withTools(demoTools("a"), nil),
		withTools(demoTools("b"), map[string]string{"run": "b_run", "noop": "b_noop", "sleep": "b_sleep"}))
	var names []string
	for _, tool := range k.Tools() {
		names = append(names, tool.Plugin+":"+tool.Name+"<"+tool.Original)
	}
	if got := strings.Join(names, " "); got != "b:b_noop<noop b:b_run<run b:b_sleep<sleep a:noop< a:run<" {
		t.Fatalf("tools with aliases and a disabled one: %s", got)
	}
	res, err := k.Call(context.Background(), "x", "b_run", json.RawMessage(`{"command":["echo","aliased"]}`))
	if err != nil || !strings.Contains(string(res.Value), "aliased") {
		t.Fatalf("calling an aliased tool: %+v, %v", res, err)
	}
	if _, err := k.Call(context.Background(), "x", "sleep", nil); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("a disabled tool was callable: %v", err)
	}
}

func TestSessionToolAuthorization(t *testing.T) {
	k, _ := newKernel(t, testConfig(t), withTools(demoTools("demo"), nil))
	ctx := context.Background()
	if _, err := k.Session(ctx, "narrow", SessionOptions{Tools: []string{"noop"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Call(ctx, "narrow", "noop", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Call(ctx, "narrow", "run", json.RawMessage(`{"command":["ls"]}`)); !errors.Is(err, backend.ErrPermission) {
		t.Fatalf("a tool not enabled for the session ran: %v", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	k, fb := newKernel(t, testConfig(t), withTools(demoTools("demo"), nil))
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := fmt.Sprintf("c%d", i%4)
			if _, err := k.Call(context.Background(), sess, "run", json.RawMessage(`{"command":["echo","x"]}`)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if fb.execCount() != 64 || fb.opens.Load() != 4 {
		t.Fatalf("64 calls over 4 sessions: %d execs, %d workspaces opened", fb.execCount(), fb.opens.Load())
	}
}
