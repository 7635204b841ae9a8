//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// reap removes containers idle longer than idle_timeout or up longer than
// max_uptime, and sweeps what other processes left behind the way GC does.
func (b *Backend) reap(ctx context.Context) {
	defer close(b.reaperDone)
	idle, uptime := time.Duration(b.cfg.IdleTimeout), time.Duration(b.cfg.MaxUptime)
	if idle == 0 && uptime == 0 {
		<-ctx.Done()
		return
	}
	period := time.Minute
	for _, d := range []time.Duration{idle, uptime} {
		if d > 0 {
			period = min(period, max(d/4, 50*time.Millisecond))
		}
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	lastSweep := time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			b.reapOnce(ctx, now)
			if idle > 0 && now.Sub(lastSweep) >= max(idle/4, time.Minute) {
				lastSweep = now
				sctx, cancel := context.WithTimeout(ctx, time.Minute)
				// Only this configuration's sessions: another's kept
				// session goes by its own idle_timeout, not this one's.
				rep, err := gcIn(sctx, b.svc, b.cfg, gcScope{ours: true, by: sweeper()}, now)
				cancel()
				for _, it := range rep.Removed {
					b.log.LogAttrs(ctx, slog.LevelInfo, "runtime.podman.idle_cleanup", slog.String("session", it.Session),
						slog.String(it.Kind, it.Name), slog.String("reason", it.Reason))
				}
				if err != nil {
					b.log.LogAttrs(ctx, slog.LevelWarn, "runtime.podman.sweep_failed", slog.String("error", err.Error()))
				}
			}
		}
	}
}

func (b *Backend) reapOnce(ctx context.Context, now time.Time) {
	b.mu.Lock()
	ws := make([]*Workspace, 0, len(b.open))
	for _, w := range b.open {
		ws = append(ws, w)
	}
	b.mu.Unlock()
	idle, uptime := time.Duration(b.cfg.IdleTimeout), time.Duration(b.cfg.MaxUptime)
	for _, w := range ws {
		st := w.cur.Load()
		if st == nil {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		var err error
		switch {
		case uptime > 0 && now.Sub(st.started) > uptime:
			err = w.retire(rctx, st, "runtime.podman.removed", fmt.Sprintf("up longer than max_uptime %s", uptime))
		case idle > 0 && w.busy.Load() == 0 && now.Sub(time.Unix(0, w.lastUsed.Load())) > idle && w.jobsRun(rctx, st):
			w.touch() // a running background job counts as use
		case idle > 0 && w.busy.Load() == 0 && now.Sub(time.Unix(0, w.lastUsed.Load())) > idle:
			err = w.retire(rctx, st, "runtime.podman.idle_cleanup", fmt.Sprintf("idle longer than idle_timeout %s", idle))
		}
		cancel()
		if err != nil {
			b.log.LogAttrs(ctx, slog.LevelWarn, "runtime.podman.reap_failed", slog.String("session", w.session), slog.String("error", err.Error()))
		}
	}
}
