package host

import (
	"context"
	"log/slog"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// releaseIfIdle gives back what the workspace of a session idle for longer
// than idle holds: through backend.IdleReleaser, else by stopping its
// sandbox (backend.Lifecycle: a container goes, its files stay). The
// session, its name and its files stay; the next call recreates what was
// released. A session is released once per idle spell, and never while a
// call or a background job runs (stopping the sandbox would end the job):
// a running job is use, so idleness counts from the last sweep that saw
// one. Calls starting meanwhile wait for the release to finish.
func (s *Session) releaseIfIdle(ctx context.Context, idle time.Duration) {
	s.idleMu.Lock()
	defer s.idleMu.Unlock()
	now := time.Now()
	last := s.last.Load()
	if s.idleFor(now) <= idle || s.released.Load() == last {
		return
	}
	s.mu.Lock()
	ws, closed := s.ws, s.closed
	s.mu.Unlock()
	if closed {
		return
	}
	if ws != nil && s.jobsKeepBusy(ctx, ws) {
		s.touch()
		return
	}
	s.released.Store(last)
	what := "nothing"
	var err error
	switch r := ws.(type) {
	case nil: // never opened: nothing to release
	case backend.IdleReleaser:
		what, err = "resources", r.ReleaseIdle(ctx)
	case backend.Lifecycle:
		what = "sandbox"
		_, err = r.Stop(ctx)
	}
	attrs := []slog.Attr{slog.String("session", s.Name()), slog.Duration("idle", now.Sub(time.Unix(0, last))), slog.String("released", what)}
	if err != nil {
		s.k.log.LogAttrs(ctx, slog.LevelWarn, "session.idle_release_failed", append(attrs, slog.String("error", err.Error()))...)
		return
	}
	s.k.log.LogAttrs(ctx, slog.LevelInfo, "session.idle_release", attrs...)
}
