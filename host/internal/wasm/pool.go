package wasm

import (
	"context"
	"sync"

	extism "github.com/extism/go-sdk"
)

// instance is one Extism plugin instance with the stderr it has written
// (a Go guest prints its panic there before exiting).
type instance struct {
	p      *extism.Plugin
	stderr *tailBuffer
}

func (in *instance) close(ctx context.Context) { _ = in.p.Close(ctx) }

// pool hands out instances one call at a time. A token in slots stands for
// a live instance, idle or busy, so at most cap(slots) exist; idle holds
// the ones not in use and wakes whoever waits for one.
type pool struct {
	slots  chan struct{}
	idle   chan *instance
	closed chan struct{}

	mu       sync.Mutex
	isClosed bool
	live     int
	drained  chan struct{} // closed once the pool is closed and live is 0
}

func newPool(size int) *pool {
	return &pool{
		slots:   make(chan struct{}, size),
		idle:    make(chan *instance, size),
		closed:  make(chan struct{}),
		drained: make(chan struct{}),
	}
}

// acquire returns an idle instance, or creates one with create while the
// pool is below its cap, or waits for one until ctx is done.
func (pl *pool) acquire(ctx context.Context, create func(context.Context) (*instance, error)) (*instance, error) {
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
			if in, err = create(ctx); err != nil {
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

// close refuses new calls and closes idle instances; busy ones are closed
// as they come back, waited for until ctx is done.
func (pl *pool) close(ctx context.Context) error {
	pl.mu.Lock()
	if pl.isClosed {
		pl.mu.Unlock()
	} else {
		pl.isClosed = true
		close(pl.closed)
		if pl.live == 0 {
			close(pl.drained)
		}
		pl.mu.Unlock()
	}
	for {
		select {
		case in := <-pl.idle:
			pl.drop(in)
			continue
		default:
		}
		break
	}
	select {
	case <-pl.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
