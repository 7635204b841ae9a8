package host

import (
	"context"

	"github.com/wai-dev/wai/host/backend"
)

type liveOutputKey struct{}

// WithLiveOutput returns a context under which every command the kernel
// runs for the caller, directly or from inside a tool plugin, streams its
// output to fn (see backend.OutputFunc), unless its request names an
// Output of its own. This is how a front end shows a tool call's output as
// it comes: MCP progress notifications, a CLI. fn may be called for several
// commands at once, so it must be safe for concurrent use; it must return
// promptly. A nil fn removes it.
//
// The sink travels in the context rather than through the plugin ABI: a
// tool call's context already reaches the host functions its plugin calls,
// so every tool that runs commands streams without knowing it, and a
// plugin can neither forge nor redirect another call's output.
func WithLiveOutput(ctx context.Context, fn backend.OutputFunc) context.Context {
	return context.WithValue(ctx, liveOutputKey{}, fn)
}

// liveOutput returns the context's sink, nil when it has none.
func liveOutput(ctx context.Context) backend.OutputFunc {
	fn, _ := ctx.Value(liveOutputKey{}).(backend.OutputFunc)
	return fn
}
