package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

func loadStateful(t testing.TB, r *Runtime) *Plugin {
	t.Helper()
	p, err := r.Load(context.Background(), Source{Bytes: testModule(t, "host/internal/wasm/testdata/stateful"), Bundled: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// remember calls the stateful plugin's remember tool in scope and returns
// the value the instance held before.
func remember(t *testing.T, p *Plugin, sc *Scope, value string) string {
	t.Helper()
	res, err := p.CallTool(context.Background(), &fakeEnv{}, ToolCall{Tool: "remember", Scope: sc,
		Params: json.RawMessage(`{"value":"` + value + `"}`)})
	if err != nil || !res.OK {
		t.Fatalf("remember %s: %+v, %v", value, res, err)
	}
	return res.Message
}

// TestSessionsDoNotShareGlobals: what a plugin keeps in a global during one
// session's call is never seen by another session's call, nor by a later
// session of the same name; within a session it stays (its instance is
// reused).
func TestSessionsDoNotShareGlobals(t *testing.T) {
	r := newRuntime(t, Options{})
	p := loadStateful(t, r)
	a, b := r.NewScope("a"), r.NewScope("b")
	defer b.Close()

	if prev := remember(t, p, a, "secret-of-a"); prev != "" {
		t.Fatalf("a's first call saw %q", prev)
	}
	if prev := remember(t, p, b, "b1"); prev != "" {
		t.Errorf("session b saw %q, left by session a", prev)
	}
	if prev := remember(t, p, a, "a2"); prev != "secret-of-a" {
		t.Errorf("session a's second call saw %q, want its own secret-of-a (its instance reused)", prev)
	}
	a.Close()
	if _, err := p.CallTool(context.Background(), &fakeEnv{}, ToolCall{Tool: "remember", Scope: a, Params: json.RawMessage(`{"value":"x"}`)}); !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "session a is closed") {
		t.Errorf("call in a closed scope: %v, want ErrUnavailable saying the session is closed", err)
	}
	again := r.NewScope("a")
	defer again.Close()
	if prev := remember(t, p, again, "a3"); prev != "" {
		t.Errorf("a new session named a saw %q, left by the closed one", prev)
	}
	// A call without a scope gets an instance of its own.
	for range 2 {
		res, err := p.CallTool(context.Background(), &fakeEnv{}, ToolCall{Tool: "remember", Params: json.RawMessage(`{"value":"loose"}`)})
		if err != nil || res.Message != "" {
			t.Errorf("a call without a scope saw %q (%v)", res.Message, err)
		}
	}
}

// holdShell answers the command "hold" only once released: a tool call
// that stays busy for as long as the test wants, on no CPU.
type holdShell struct {
	started chan string // the session of each hold that began
	release chan struct{}
	once    sync.Once
}

// newHoldShell returns a holdShell released at the latest when t ends, so
// a failing test does not leave calls waiting for their deadline.
func newHoldShell(t *testing.T) *holdShell {
	h := &holdShell{started: make(chan string, 64), release: make(chan struct{})}
	t.Cleanup(h.releaseAll)
	return h
}

func (h *holdShell) releaseAll() { h.once.Do(func() { close(h.release) }) }

func (h *holdShell) env(session string) *fakeEnv {
	return &fakeEnv{exec: func(ctx context.Context, req backend.ExecRequest) (backend.ExecResult, error) {
		h.started <- session
		select {
		case <-h.release:
			return backend.ExecResult{Stdout: "released", Backend: "fake"}, nil
		case <-ctx.Done():
			return backend.ExecResult{}, ctx.Err()
		}
	}}
}

// holdCalls starts n hold calls in sc and waits until all n run in the
// guest (event-ordered: each reached the shell). Their results arrive on
// the returned channel once h is released.
func holdCalls(t *testing.T, p *Plugin, h *holdShell, sc *Scope, n int) <-chan error {
	t.Helper()
	done := make(chan error, n)
	for range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			res, err := p.CallTool(ctx, h.env(sc.name), ToolCall{Tool: "hold", Scope: sc, Params: json.RawMessage(`{}`)})
			if err == nil && (!res.OK || res.Message != "released") {
				err = errors.New("hold answered " + res.Message)
			}
			done <- err
		}()
	}
	for range n {
		<-h.started
	}
	return done
}

// TestLongCallsDoNotStarveOtherSessions: a session running as many long
// calls as its cap allows leaves other sessions' calls free to run, and
// its own next call waits for a slot, then fails saying why.
func TestLongCallsDoNotStarveOtherSessions(t *testing.T) {
	r := newRuntime(t, Options{})
	p := loadStateful(t, r)
	greedy, other := r.NewScope("greedy"), r.NewScope("other")
	defer greedy.Close()
	defer other.Close()
	h := newHoldShell(t)
	held := holdCalls(t, p, h, greedy, DefaultSessionConcurrentCalls)

	// Every one of greedy's calls is still blocked in its shell (h is not
	// released): the other session's calls must complete regardless. The
	// deadline is generous; a starved call would spend all of it.
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := p.CallTool(ctx, &fakeEnv{}, ToolCall{Tool: "remember", Scope: other, Params: json.RawMessage(`{"value":"v"}`)})
		cancel()
		if err != nil || !res.OK {
			t.Fatalf("other session's call %d while greedy holds %d calls: %+v, %v", i, DefaultSessionConcurrentCalls, res, err)
		}
	}
	select {
	case err := <-held:
		t.Fatalf("a held call returned before release: %v", err)
	default:
	}

	// One more call in greedy waits for a slot until its deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := p.CallTool(ctx, &fakeEnv{}, ToolCall{Tool: "remember", Scope: greedy, Params: json.RawMessage(`{"value":"v"}`)})
	cancel()
	if !errors.Is(err, ErrSessionBusy) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, backend.ErrInvalid) ||
		errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "limits.session_concurrent_calls") {
		t.Errorf("call past the session's cap: %v, want ErrInvalid (a limit, not an outage)/ErrSessionBusy naming limits.session_concurrent_calls", err)
	}

	h.releaseAll()
	for range DefaultSessionConcurrentCalls {
		if err := <-held; err != nil {
			t.Errorf("held call: %v", err)
		}
	}
	if prev := remember(t, p, greedy, "after"); prev != "" {
		t.Errorf("greedy's call after release saw %q", prev)
	}
}

// TestMemoryBudget: instances are created while the runtime's memory
// budget has room; past it a call fails with ErrUnavailable naming the
// key, idle instances are closed to make room before that, and a guest
// that grows past the budget fails the same way.
func TestMemoryBudget(t *testing.T) {
	t.Parallel() // a runtime of its own, and no timing to keep
	// The budget is sized from a real instance (a fresh one, ~4 MiB, grows
	// by ~0.6 MiB in its first call): room for two used instances, not
	// three. The instance left idle by describe is closed to make room.
	probe := newRuntime(t, Options{})
	fresh := loadStateful(t, probe).freshBytes.Load()
	r := newRuntime(t, Options{MemoryBudgetBytes: 2*fresh + fresh/2 + 2<<20})
	p := loadStateful(t, r)
	h := newHoldShell(t)
	scopes := map[string]*Scope{}
	for _, n := range []string{"a", "b", "c"} {
		scopes[n] = r.NewScope(n)
		defer scopes[n].Close()
	}

	heldA := holdCalls(t, p, h, scopes["a"], 1)
	heldB := holdCalls(t, p, h, scopes["b"], 1)
	_, err := p.CallTool(context.Background(), &fakeEnv{}, ToolCall{Tool: "remember", Scope: scopes["c"], Params: json.RawMessage(`{"value":"v"}`)})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "limits.plugin_memory_budget") || !strings.Contains(err.Error(), "session c") {
		t.Fatalf("a third instance past the budget: %v, want ErrUnavailable naming limits.plugin_memory_budget and session c", err)
	}

	h.releaseAll()
	for _, ch := range []<-chan error{heldA, heldB} {
		if err := <-ch; err != nil {
			t.Fatalf("held call: %v", err)
		}
	}
	// a's and b's instances are idle now: c's call closes the longest
	// idle one to make room.
	if prev := remember(t, p, scopes["c"], "c1"); prev != "" {
		t.Errorf("c saw %q", prev)
	}
	if n := live(p); n > 3 {
		t.Errorf("%d live instances, the budget has room for 3", n)
	}

	// A guest growing past the budget is stopped where it grows.
	res, err := p.CallTool(context.Background(), &fakeEnv{}, ToolCall{Tool: "grow", Scope: scopes["c"], Params: json.RawMessage(`{"mib":32}`)})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "limits.plugin_memory_budget") {
		t.Errorf("growing past the budget: %+v, %v; want ErrUnavailable naming limits.plugin_memory_budget", res, err)
	}
	if used := r.mem.inUse(); used > r.mem.limit {
		t.Errorf("%d bytes in use, over the budget of %d", used, r.mem.limit)
	}
	if prev := remember(t, p, scopes["c"], "c2"); prev != "" {
		t.Errorf("after its instance was discarded, c saw %q", prev)
	}
}

// TestScopeCloseDiscardsBusyInstances: closing a session while its call
// runs lets the call finish, then closes the instance instead of keeping
// it.
func TestScopeCloseDiscardsBusyInstances(t *testing.T) {
	r := newRuntime(t, Options{})
	p := loadStateful(t, r)
	sc := r.NewScope("closing")
	h := newHoldShell(t)
	held := holdCalls(t, p, h, sc, 1)
	before := live(p)
	sc.Close()
	h.releaseAll()
	if err := <-held; err != nil {
		t.Fatalf("the running call: %v", err)
	}
	if n := live(p); n != before-1 {
		t.Errorf("live instances %d → %d: the closed session's instance was kept", before, n)
	}
}

// TestIdleInstancesAreTrimmed: an instance its session stopped using is
// closed after IdleInstanceTimeout, and its memory returns to the budget,
// though the session stays open.
func TestIdleInstancesAreTrimmed(t *testing.T) {
	r := newRuntime(t, Options{IdleInstanceTimeout: 50 * time.Millisecond})
	p := loadStateful(t, r)
	sc := r.NewScope("idle")
	defer sc.Close()
	remember(t, p, sc, "v")
	// Polled with a generous bound: the janitor runs every 12.5 ms, so on
	// any machine this ends long before the bound.
	for deadline := time.Now().Add(time.Minute); live(p) > 0 || r.mem.inUse() > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d instances, %d bytes still held a minute after their last use", live(p), r.mem.inUse())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if prev := remember(t, p, sc, "w"); prev != "" {
		t.Errorf("after trimming, the session's next call saw %q: want a fresh instance", prev)
	}
}
