package wasm

import (
	"context"
	"sync"
	"time"

	extism "github.com/extism/go-sdk"
)

// instance is one Extism plugin instance with the stderr it has written
// (a Go guest prints its panic there before exiting) and the meter its
// memories are counted by.
type instance struct {
	p         *extism.Plugin
	stderr    *tailBuffer
	meter     *meter
	idleSince time.Time // when it last went back to its pool
}

func (in *instance) close(ctx context.Context) {
	_ = in.p.Close(ctx)
	in.meter.release()
}

// pool hands out the instances of one plugin to one owner (a session's
// Scope, or the plugin's shared pool for describe and policy checks
// outside a session), one call at a time. A token in slots stands for a
// live instance, idle or busy, so at most cap(slots) exist; idle holds the
// ones not in use and wakes whoever waits for one.
type pool struct {
	plugin *Plugin
	owner  string // "session NAME", or "" for the shared pool

	slots  chan struct{}
	idle   chan *instance
	closed chan struct{}

	mu       sync.Mutex
	isClosed bool
	live     int
	drained  chan struct{} // closed once the pool is closed and live is 0
}

func newPool(p *Plugin, owner string, size int) *pool {
	return &pool{
		plugin:  p,
		owner:   owner,
		slots:   make(chan struct{}, size),
		idle:    make(chan *instance, size),
		closed:  make(chan struct{}),
		drained: make(chan struct{}),
	}
}

// acquire returns an idle instance, or creates one while the pool is below
// its cap (and the runtime's memory budget has room), or waits for one
// until ctx is done.
func (pl *pool) acquire(ctx context.Context) (*instance, error) {
	var in *instance
	select {
	case in = <-pl.idle:
	default:
		select {
		case in = <-pl.idle:
		case pl.slots <- struct{}{}:
			pl.mu.Lock()
			if pl.isClosed {
				pl.mu.Unlock()
				<-pl.slots
				return nil, errPoolClosed
			}
			pl.live++
			pl.mu.Unlock()
			var err error
			if in, err = pl.plugin.instantiate(ctx, pl.owner); err != nil {
				pl.drop(nil)
				return nil, err
			}
		case <-pl.closed:
			return nil, errPoolClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	pl.mu.Lock()
	closed := pl.isClosed
	pl.mu.Unlock()
	if closed {
		pl.drop(in)
		return nil, errPoolClosed
	}
	return in, nil
}

// release returns a healthy instance to the pool.
func (pl *pool) release(in *instance) {
	in.idleSince = time.Now()
	pl.putBack(in)
}

// putBack returns an instance to idle as it is (trimming takes instances
// out to look at them and puts back the ones it keeps).
func (pl *pool) putBack(in *instance) {
	pl.mu.Lock()
	if !pl.isClosed {
		// Never blocks: idle has room for every live instance.
		pl.idle <- in
		pl.mu.Unlock()
		return
	}
	pl.mu.Unlock()
	pl.drop(in)
}

// takeIdle takes every idle instance out of the pool.
func (pl *pool) takeIdle() []*instance {
	var out []*instance
	for {
		select {
		case in := <-pl.idle:
			out = append(out, in)
		default:
			return out
		}
	}
}

// trim closes the instances idle since before cutoff.
func (pl *pool) trim(cutoff time.Time) {
	for _, in := range pl.takeIdle() {
		if in.idleSince.Before(cutoff) {
			pl.drop(in)
		} else {
			pl.putBack(in)
		}
	}
}

// drop closes an instance that trapped or timed out (or any instance once
// the pool is closed) and frees its slot.
func (pl *pool) drop(in *instance) {
	if in != nil {
		in.close(context.Background())
	}
	<-pl.slots
	pl.mu.Lock()
	pl.live--
	if pl.isClosed && pl.live == 0 {
		close(pl.drained)
	}
	pl.mu.Unlock()
}

// shutdown refuses new calls and closes the idle instances; busy ones are
// closed as they come back. It does not wait for them.
func (pl *pool) shutdown() {
	pl.mu.Lock()
	if !pl.isClosed {
		pl.isClosed = true
		close(pl.closed)
		if pl.live == 0 {
			close(pl.drained)
		}
	}
	pl.mu.Unlock()
	for _, in := range pl.takeIdle() {
		pl.drop(in)
	}
	pl.plugin.rt.forgetPool(pl)
}

// close shuts the pool down and waits, until ctx is done, for the busy
// instances to come back and be closed.
func (pl *pool) close(ctx context.Context) error {
	pl.shutdown()
	select {
	case <-pl.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
