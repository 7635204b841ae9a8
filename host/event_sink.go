package host

import (
	"context"
	"log/slog"
)

// EventSink receives the kernel's events about one caller's work, as they
// happen: an MCP server forwards them to its client as log notifications.
// Event must not block for long; the kernel calls it inline.
type EventSink interface {
	// EventEnabled reports whether events at level are wanted at all, so
	// the kernel builds none the sink would drop.
	EventEnabled(level slog.Level) bool
	Event(ctx context.Context, r slog.Record)
}

type eventSinkKey struct{}

// WithEventSink returns a context under which the kernel's events (policy
// decisions, workspace lifecycle steps, warnings) logged for work done
// with it also reach sink, besides the kernel's logger. Each record
// carries the attributes the kernel's logger added (backend, …).
func WithEventSink(ctx context.Context, sink EventSink) context.Context {
	return context.WithValue(ctx, eventSinkKey{}, sink)
}

func eventSinkFrom(ctx context.Context) EventSink {
	if ctx == nil {
		return nil
	}
	s, _ := ctx.Value(eventSinkKey{}).(EventSink)
	return s
}

// sinkHandler sends each record to the kernel's handler and, when the
// context carries an EventSink, to it too.
type sinkHandler struct {
	next  slog.Handler
	attrs []slog.Attr // added by WithAttrs, for the sink's copy
}

func (h *sinkHandler) Enabled(ctx context.Context, l slog.Level) bool {
	if s := eventSinkFrom(ctx); s != nil && s.EventEnabled(l) {
		return true
	}
	return h.next.Enabled(ctx, l)
}

func (h *sinkHandler) Handle(ctx context.Context, r slog.Record) error {
	if s := eventSinkFrom(ctx); s != nil && s.EventEnabled(r.Level) {
		c := r.Clone()
		c.AddAttrs(h.attrs...)
		s.Event(ctx, c)
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *sinkHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &sinkHandler{next: h.next.WithAttrs(as), attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

// WithGroup groups the kernel handler's attributes; the sink's copy stays
// flat (the kernel's events use no groups).
func (h *sinkHandler) WithGroup(name string) slog.Handler {
	return &sinkHandler{next: h.next.WithGroup(name), attrs: h.attrs}
}

// Interface guards
var _ slog.Handler = (*sinkHandler)(nil)
