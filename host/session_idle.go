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
// call runs: calls starting meanwhile wait for the release to finish.
func (s *Session) releaseIfIdle(ctx context.Context, idle time.Duration) {
	s.idleMu.Lock()
	defer s.idleMu.Unlock()
	now := time.Now()
	last := s.last.Load()
	if s.idleFor(now) <= idle || s.released.Load() == last {
		return
	}
	s.released.Store(last)
	s.mu.Lock()
	ws, closed := s.ws, s.closed
	s.mu.Unlock()
	if closed {
		return
	}
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

// reap releases what sessions idle for longer than idle hold (a running
// container), never their files: a client that stays connected but quiet
// finds its workspace as it left it, and the next call recreates what was
// released. Only a session's owner closes it (or wai rm, or wai gc once no
// process holds it). It checks a few times per idle period, so a session
// holds its resources at most about 1.25 × idle unused.
func (k *Kernel) reap(ctx context.Context, idle time.Duration) {
	defer close(k.reaperDone)
	tick := time.NewTicker(max(idle/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			for _, s := range k.idleSessions(now, idle) {
				cctx, cancel := context.WithTimeout(ctx, time.Minute)
				s.releaseIfIdle(cctx, idle)
				cancel()
			}
		}
	}
}

func (k *Kernel) idleSessions(now time.Time, idle time.Duration) []*Session {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []*Session
	for _, s := range k.sessions {
		if s.idleFor(now) > idle {
			out = append(out, s)
		}
	}
	return out
}
