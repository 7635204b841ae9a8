package host

import (
	"context"
	"log/slog"
)

// useEvent logs one use of the session's shell or filesystem as msg: at
// info, or at warn with the error when err is set, naming the session and
// the tool whose call made it. attrs gives the rest; it is called only
// when the level is logged, so a quiet logger costs no attributes.
func (s *Session) useEvent(ctx context.Context, msg string, err error, attrs func() []slog.Attr) {
	log := s.k.log
	level := slog.LevelInfo
	if err != nil {
		level = slog.LevelWarn
	}
	if !log.Enabled(ctx, level) {
		return
	}
	all := append([]slog.Attr{slog.String("session", s.spec.Session)}, attrs()...)
	if tool := callTool(ctx); tool != "" {
		all = append(all, slog.String("tool", tool))
	}
	if err != nil {
		all = append(all, slog.String("error", err.Error()))
	}
	log.LogAttrs(ctx, level, msg, all...)
}
