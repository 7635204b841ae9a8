package wasm

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/wai-dev/wai/host/backend"
)

// newInstance instantiates the compiled module with its memories counted
// against the runtime's memory budget (which it does not check: see
// instantiate).
func (p *Plugin) newInstance(ctx context.Context) (*instance, error) {
	stderr := newTailBuffer(2048)
	cfg := wazero.NewModuleConfig().
		// Real clocks and entropy (wazero's defaults are fixed values), but
		// no filesystem, no args, no environment, no sleeping: a guest that
		// sleeps spins on the clock, where the deadline can reach it.
		WithSysWalltime().WithSysNanotime().WithRandSource(rand.Reader).
		WithStderr(stderr).WithStdout(stderr)
	m := &meter{b: p.rt.mem}
	inst, err := p.compiled.Instance(experimental.WithMemoryAllocator(ctx, m), extism.PluginInstanceConfig{ModuleConfig: cfg})
	if err != nil {
		m.release()
		if ctx.Err() != nil {
			return nil, &Error{Plugin: p.name, Op: "instantiate", Cause: deadlineError{ctx.Err()}, Msg: "interrupted"}
		}
		return nil, &Error{Plugin: p.name, Op: "instantiate", Cause: ErrTrap, Msg: fmt.Sprintf("cannot instantiate: %v", err)}
	}
	p.freshBytes.Store(m.size())
	return &instance{p: inst, stderr: stderr, meter: m}, nil
}

// instantiate creates an instance for owner if the memory budget has room
// for one more, closing other idle instances to make room if it must.
func (p *Plugin) instantiate(ctx context.Context, owner string) (*instance, error) {
	need := p.freshBytes.Load()
	if !p.rt.mem.reserve(need) {
		p.rt.makeRoom(need)
		if !p.rt.mem.reserve(need) {
			return nil, p.budgetError("instantiate", owner)
		}
	}
	// The reservation stands in for the new memories until they exist and
	// are counted themselves.
	defer p.rt.mem.release(need)
	return p.newInstance(ctx)
}

// budgetError says the memory budget is spent and what to do about it.
func (p *Plugin) budgetError(op, owner string) error {
	for_ := ""
	if owner != "" {
		for_ = " for " + owner
	}
	return errorf(p.name, op, backend.ErrUnavailable,
		"no memory left%s: plugin instances hold %d MiB of the %d MiB budget (limits.plugin_memory_budget), all of it in calls running now; retry when they finish, or raise the budget",
		for_, p.rt.mem.inUse()>>20, p.rt.mem.limit>>20)
}

// poolError turns errPoolClosed into the error a caller sees.
func (p *Plugin) poolError(op string, err error) error {
	if errors.Is(err, errPoolClosed) {
		return errorf(p.name, op, backend.ErrUnavailable, "the plugin is closed (reloaded or shutting down); retry")
	}
	return err
}

// callInScope runs wai_call on an instance of the call's scope, within
// the scope's cap on concurrent calls. A call without a scope gets a
// scope of its own, thrown away after it: it shares nothing either.
func (p *Plugin) callInScope(ctx context.Context, req ToolCall, op string, env Env, in []byte) ([]byte, error) {
	sc := req.Scope
	if sc == nil {
		sc = p.rt.NewScope(req.Session)
		defer sc.Close()
	}
	leave, err := sc.enter(ctx, p.name, op)
	if err != nil {
		return nil, err
	}
	defer leave()
	pl, err := sc.poolFor(p, op)
	if err != nil {
		return nil, p.poolError(op, err)
	}
	return p.call(withScope(ctx, sc), pl, op, exportCall, env, in)
}
