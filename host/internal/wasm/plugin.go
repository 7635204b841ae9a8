package wasm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wai-dev/wai/host/backend"
)

// Exports of the ABI.
const (
	exportDescribe = "wai_describe"
	exportCall     = "wai_call"
	exportCheck    = "wai_check"
)

var errPoolClosed = errors.New("plugin is closed")

// Plugin is a loaded plugin with its instance pool. It is safe for
// concurrent use.
type Plugin struct {
	rt       *Runtime
	name     string
	sha      string
	imports  []string
	exports  map[string]bool
	compiled *extism.CompiledPlugin
	// shared serves describe, and policy checks made outside a session's
	// tool call; sessions' tool calls run on their Scope's pools.
	shared  *pool
	desc    Description
	granted capSet
	// freshBytes is the guest memory of the latest new instance: what the
	// next one is expected to need from the memory budget.
	freshBytes atomic.Int64
	closing    bool // guarded by rt.mu: no new pool may open

	closeOnce sync.Once
	closeErr  error
}

// Describe returns what the plugin said about itself, with Granted set.
func (p *Plugin) Describe() Description { return p.desc }

// SHA256 returns the hex digest of the module.
func (p *Plugin) SHA256() string { return p.sha }

// Imports lists the wai host functions the module imports, sorted.
func (p *Plugin) Imports() []string { return append([]string(nil), p.imports...) }

// Close refuses new calls, waits for calls in flight until ctx is done,
// then releases everything the plugin holds.
func (p *Plugin) Close(ctx context.Context) error {
	p.closeOnce.Do(func() {
		p.rt.mu.Lock()
		p.closing = true
		p.rt.mu.Unlock()
		pools := p.rt.openPools(p)
		if p.shared != nil && !slices.Contains(pools, p.shared) {
			pools = append(pools, p.shared)
		}
		// Calls still running after ctx are cut short by closing the
		// runtime under them: they fail, they do not hang.
		for _, pl := range pools {
			pl.shutdown()
		}
		for _, pl := range pools {
			_ = pl.close(ctx)
		}
		if p.compiled != nil {
			p.closeErr = p.compiled.Close(context.WithoutCancel(ctx))
		}
		p.rt.forget(p)
	})
	return p.closeErr
}

// callState travels in the context of a guest call to its host functions.
type callState struct {
	p   *Plugin
	env Env // nil while describing: every host function then refuses
}

type stateKey struct{}

// call runs one export on an instance of pl and returns its output, or an
// *Error. A trapped or interrupted instance is dropped from the pool.
func (p *Plugin) call(ctx context.Context, pl *pool, op, export string, env Env, input []byte) ([]byte, error) {
	in, err := pl.acquire(ctx)
	if err != nil {
		switch {
		case errors.Is(err, errPoolClosed):
			return nil, p.poolError(op, err)
		case ctx.Err() != nil:
			return nil, &Error{Plugin: p.name, Op: op, Cause: deadlineError{ctx.Err()}, Msg: "no free instance before the deadline"}
		}
		return nil, err
	}
	ctx = context.WithValue(ctx, stateKey{}, &callState{p: p, env: env})
	_, out, err := in.p.CallWithContext(ctx, export, pad8(input))
	if err != nil {
		// Extism reports a guest's error_set as an error with rc != 0 and
		// the instance intact; anything else killed the instance.
		var exit *sys.ExitError
		switch {
		case ctx.Err() != nil:
			pl.drop(in)
			return nil, &Error{Plugin: p.name, Op: op, Cause: deadlineError{ctx.Err()}, Msg: "interrupted at the deadline; the instance was discarded"}
		case in.meter.wasRefused():
			// The guest died of a memory.grow the budget refused.
			pl.drop(in)
			return nil, p.budgetError(op, pl.owner)
		case errors.As(err, &exit):
			pl.drop(in)
			return nil, &Error{Plugin: p.name, Op: op, Cause: ErrTrap,
				Msg: fmt.Sprintf("exited with code %d%s", exit.ExitCode(), in.stderr.suffix())}
		case in.p.GetErrorWithContext(context.WithoutCancel(ctx)) == err.Error():
			// The guest returned normally after error_set: the instance
			// is intact, and the message is the guest's own. (A guest that
			// forged its own trap's message here would only keep its own
			// broken instance; the host is not at stake.)
			pl.release(in)
			return nil, guestError(p.name, op, err.Error())
		default:
			pl.drop(in)
			return nil, &Error{Plugin: p.name, Op: op, Cause: ErrTrap, Msg: fmt.Sprintf("trapped: %v%s", err, in.stderr.suffix())}
		}
	}
	pl.release(in)
	if len(out) > p.rt.opts.MaxOutputBytes {
		return nil, errorf(p.name, op, backend.ErrInvalid, "answered %d bytes, over the limit of %d", len(out), p.rt.opts.MaxOutputBytes)
	}
	return out, nil
}

// describe runs wai_describe on the first instance, which then joins the
// pool. Host functions refuse during it: there is no Env yet.
//
// It is bounded by the call timeout, not the policy check's: the first
// call also instantiates the module and runs the guest's runtime start-up,
// which on a loaded machine takes well over a policy check's second (the
// suite failed there at load 40 with "describe: interrupted at the
// deadline"). Loading is not on any request's hot path; a describe that
// never returns is still cut off.
func (p *Plugin) describe(ctx context.Context) (Description, error) {
	ctx, cancel := context.WithTimeout(ctx, p.rt.opts.CallTimeout)
	defer cancel()
	out, err := p.call(ctx, p.shared, "describe", exportDescribe, nil, []byte(fmt.Sprintf(`{"abi":%d}`, ABIVersion)))
	if err != nil {
		return Description{}, err
	}
	var d Description
	if err := decodeStrict(out, &d); err != nil {
		// Any export may answer an ABI error (docs/ABI.md §5): the pdk
		// does when the plugin declares nothing or a params type has no
		// schema, and its message says what to fix.
		var e struct {
			Error *wireError `json:"error"`
		}
		if decodeStrict(out, &e) == nil && e.Error != nil {
			return Description{}, e.Error.asError(p.name, "describe")
		}
		return Description{}, errorf(p.name, "describe", backend.ErrInvalid, "answered something that is not a description: %v", err)
	}
	if err := p.validate(&d); err != nil {
		return Description{}, err
	}
	return d, nil
}

// deadline derives the context of one call: the earliest of the caller's
// deadline, the request's, and now+fallback.
func deadline(ctx context.Context, req time.Time, fallback time.Duration) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !req.IsZero() && (!ok || req.Before(d)) {
		d, ok = req, true
	}
	if !ok {
		d = time.Now().Add(fallback)
	}
	return context.WithDeadline(ctx, d)
}

// wireCall is the input of wai_call.
type wireCall struct {
	Tool       string          `json:"tool"`
	Params     json.RawMessage `json:"params"`
	CallID     string          `json:"call_id,omitempty"`
	Session    string          `json:"session,omitempty"`
	DeadlineMS int64           `json:"deadline_ms"`
	TimeoutMS  int64           `json:"timeout_ms"`
}

// wireResult is the output of wai_call (and, with Decision, wai_check).
type wireResult struct {
	OK        *bool           `json:"ok"`
	Message   string          `json:"message"`
	Value     json.RawMessage `json:"value"`
	Decision  string          `json:"decision"`
	Reason    string          `json:"reason"`
	ConfigKey string          `json:"config_key"`
	Error     *wireError      `json:"error"`
}

// CallTool calls one tool of a tool plugin. Capability uses inside it go
// to env. A failed result is not an error; errors are for calls that did
// not produce a result (bad request, trap, deadline, guest error).
func (p *Plugin) CallTool(ctx context.Context, env Env, req ToolCall) (ToolResult, error) {
	op := "call " + req.Tool
	if p.desc.Kind != KindTool {
		return ToolResult{}, errorf(p.name, op, backend.ErrInvalid, "is a %s plugin, it has no tools", p.desc.Kind)
	}
	if !p.hasTool(req.Tool) {
		return ToolResult{}, errorf(p.name, op, backend.ErrNotFound, "has no tool %q (it has: %s)", req.Tool, strings.Join(p.toolNames(), ", "))
	}
	if env == nil {
		return ToolResult{}, errorf(p.name, op, backend.ErrInvalid, "no Env for the call: the kernel must give one")
	}
	ctx, cancel := deadline(ctx, req.Deadline, p.rt.opts.CallTimeout)
	defer cancel()
	dl, _ := ctx.Deadline()
	params := req.Params
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	in, err := json.Marshal(wireCall{Tool: req.Tool, Params: params, CallID: req.CallID, Session: req.Session,
		DeadlineMS: dl.UnixMilli(), TimeoutMS: max(time.Until(dl).Milliseconds(), 0)})
	if err != nil {
		return ToolResult{}, errorf(p.name, op, backend.ErrInvalid, "params are not valid JSON: %v", err)
	}
	out, err := p.callInScope(ctx, req, op, env, in)
	if err != nil {
		return ToolResult{}, err
	}
	var w wireResult
	if err := decodeStrict(out, &w); err != nil {
		return ToolResult{}, errorf(p.name, op, backend.ErrInvalid, "answered something that is not a tool result: %v", err)
	}
	switch {
	case w.Error != nil:
		return ToolResult{}, w.Error.asError(p.name, op)
	case w.OK == nil || w.Decision != "" || w.Reason != "" || w.ConfigKey != "":
		return ToolResult{}, errorf(p.name, op, backend.ErrInvalid, `answered without "ok": a tool result is {"ok":bool,"message":string,"value":any}`)
	}
	res := ToolResult{OK: *w.OK, Message: w.Message}
	if v := bytes.TrimSpace(w.Value); len(v) > 0 && !bytes.Equal(v, []byte("null")) {
		res.Value = v
	}
	return res, nil
}

// Check asks a policy plugin about one action. Any error means the policy
// could not answer, and the kernel must deny.
func (p *Plugin) Check(ctx context.Context, req CheckRequest) (Decision, error) {
	const op = "check"
	if p.desc.Kind != KindPolicy {
		return Decision{}, errorf(p.name, op, backend.ErrInvalid, "is a %s plugin, not a policy", p.desc.Kind)
	}
	ctx, cancel := deadline(ctx, time.Time{}, p.rt.opts.CheckTimeout)
	defer cancel()
	in, err := json.Marshal(req)
	if err != nil {
		return Decision{}, errorf(p.name, op, backend.ErrInvalid, "cannot encode the request: %v", err)
	}
	pl := p.shared
	if sc := scopeFrom(ctx); sc != nil {
		// A check caused by a session's tool call runs on that session's
		// instances, like the call itself.
		if pl, err = sc.poolFor(p, op); err != nil {
			return Decision{}, p.poolError(op, err)
		}
	}
	out, err := p.call(ctx, pl, op, exportCheck, nil, in)
	if err != nil {
		return Decision{}, err
	}
	var w wireResult
	if err := decodeStrict(out, &w); err != nil {
		return Decision{}, errorf(p.name, op, backend.ErrInvalid, "answered something that is not a decision: %v", err)
	}
	switch {
	case w.Error != nil:
		return Decision{}, w.Error.asError(p.name, op)
	case w.Decision == "allow" && w.OK == nil:
		return Decision{Allow: true, Reason: w.Reason}, nil
	case w.Decision == "deny" && w.OK == nil:
		if w.Reason == "" {
			w.Reason = "denied by policy " + p.name
		}
		return Decision{Reason: w.Reason, ConfigKey: w.ConfigKey}, nil
	case w.Decision == "ask" && w.OK == nil:
		if w.Reason == "" {
			// A person asked must be told why: an ask without one is
			// a broken answer, which denies.
			return Decision{}, errorf(p.name, op, backend.ErrInvalid, `answered "ask" without a reason: the person asked must be told why`)
		}
		return Decision{Ask: true, Reason: w.Reason, ConfigKey: w.ConfigKey}, nil
	}
	return Decision{}, errorf(p.name, op, backend.ErrInvalid, `answered decision %q: a policy answers {"decision":"allow"|"deny"|"ask","reason":string,"config_key":string}`, w.Decision)
}

func (p *Plugin) hasTool(name string) bool {
	for _, t := range p.desc.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func (p *Plugin) toolNames() []string {
	names := make([]string, len(p.desc.Tools))
	for i, t := range p.desc.Tools {
		names[i] = t.Name
	}
	return names
}

// decodeStrict is backend.DecodeStrict: a guest's answer has no field
// the host does not know, and nothing after it.
func decodeStrict(b []byte, v any) error { return backend.DecodeStrict(b, v) }

// pad8 pads JSON with trailing spaces to a multiple of 8 bytes. Guests
// copy Extism blocks 8 bytes per host call and the remainder byte by byte,
// and Extism serves each of those byte calls through an export lookup that
// costs microseconds: padding makes them disappear. JSON readers ignore
// trailing whitespace.
func pad8(b []byte) []byte {
	if r := len(b) % 8; r != 0 {
		b = append(b, "       "[:8-r]...)
	}
	return b
}

// tailBuffer keeps the last bytes a guest wrote to stdout/stderr.
type tailBuffer struct {
	buf *backend.OutputBuffer // safe for concurrent use
}

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{buf: backend.NewOutputBuffer(n)} }

func (t *tailBuffer) Write(b []byte) (int, error) { return t.buf.Write(b) }

// suffix renders what the guest printed, for an error message.
func (t *tailBuffer) suffix() string {
	s := strings.TrimSpace(t.buf.String())
	if s == "" {
		return ""
	}
	return "; guest output: " + s
}

// logger returns the plugin's logger.
func (p *Plugin) logger() *slog.Logger { return p.rt.log.With(slog.String("plugin", p.name)) }

// Interface guards
var _ io.Writer = (*tailBuffer)(nil)
