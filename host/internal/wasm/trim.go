package wasm

import (
	"context"
	"slices"
	"time"

	"github.com/wai-dev/wai/host/internal/sweep"
)

// addPool registers an open pool; it fails once the runtime or the pool's
// plugin is closing, so no pool outlives them.
func (r *Runtime) addPool(pl *pool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || pl.plugin.closing {
		return false
	}
	r.pools[pl] = struct{}{}
	return true
}

func (r *Runtime) forgetPool(pl *pool) {
	r.mu.Lock()
	delete(r.pools, pl)
	r.mu.Unlock()
}

// openPools returns the registered pools, of one plugin when p is not nil.
func (r *Runtime) openPools(p *Plugin) []*pool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*pool, 0, len(r.pools))
	for pl := range r.pools {
		if p == nil || pl.plugin == p {
			out = append(out, pl)
		}
	}
	return out
}

// janitor closes instances idle for longer than IdleInstanceTimeout, so a
// session that stopped calling a plugin gives its memory back before the
// session itself closes.
func (r *Runtime) janitor(ctx context.Context) {
	defer close(r.janitorDone)
	idle := r.opts.IdleInstanceTimeout
	sweep.Every(ctx, idle, func(now time.Time) {
		for _, pl := range r.openPools(nil) {
			pl.trim(now.Add(-idle))
		}
	})
}

// makeRoom closes idle instances, longest idle first, until need bytes of
// the memory budget are free or no idle instance is left. Busy instances
// are never touched.
func (r *Runtime) makeRoom(need int64) {
	type idleInstance struct {
		pl *pool
		in *instance
	}
	var all []idleInstance
	for _, pl := range r.openPools(nil) {
		for _, in := range pl.takeIdle() {
			all = append(all, idleInstance{pl, in})
		}
	}
	slices.SortFunc(all, func(a, b idleInstance) int { return a.in.idleSince.Compare(b.in.idleSince) })
	for _, x := range all {
		if r.mem.limit-r.mem.inUse() >= need {
			x.pl.putBack(x.in)
			continue
		}
		x.pl.drop(x.in)
	}
}
