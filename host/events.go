package host

import (
	"context"
	"errors"
	"log/slog"
)

// teeHandler sends each record to every handler that wants it: the
// caller's logger and the JSONL audit file see the same events, each at
// its own level.
type teeHandler struct{ hs []slog.Handler }

func newTeeHandler(hs ...slog.Handler) slog.Handler { return &teeHandler{hs: hs} }

func (t *teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range t.hs {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (t *teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	for _, h := range t.hs {
		if h.Enabled(ctx, r.Level) {
			if err := h.Handle(ctx, r.Clone()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (t *teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Handler, len(t.hs))
	for i, h := range t.hs {
		out[i] = h.WithAttrs(as)
	}
	return &teeHandler{hs: out}
}

func (t *teeHandler) WithGroup(name string) slog.Handler {
	out := make([]slog.Handler, len(t.hs))
	for i, h := range t.hs {
		out[i] = h.WithGroup(name)
	}
	return &teeHandler{hs: out}
}

// Interface guards
var _ slog.Handler = (*teeHandler)(nil)
