package wasm

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// budget bounds the guest memory of every instance of a runtime together.
// Each instance allocates its linear memories (its own and the Extism
// kernel's) through a meter, so the count is exact and growth past the
// budget is refused where it happens: memory.grow fails inside the guest,
// which then traps, instead of the host running out of memory.
type budget struct {
	limit int64 // bytes; fixed at construction
	// makeRoom closes idle instances until n bytes are free, if it can.
	makeRoom func(n int64)

	mu   sync.Mutex
	used int64
}

// reserve counts n more bytes if they fit.
func (b *budget) reserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// force counts n more bytes whether or not they fit: a memory's initial
// allocation cannot fail (wazero requires it to succeed), so instantiate
// reserves the expected size beforehand instead.
func (b *budget) force(n int64) {
	b.mu.Lock()
	b.used += n
	b.mu.Unlock()
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// inUse reports the bytes counted now.
func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// meter is the memory allocator of one instance. It remembers what its
// memories hold so closing the instance gives it all back at once, even
// when wazero frees an interrupted module's memory late.
type meter struct {
	b *budget

	mu       sync.Mutex
	bytes    int64 // held by this instance's memories
	refused  bool  // a growth was refused for lack of budget
	released bool  // the instance is closed; its bytes are back
}

var _ experimental.MemoryAllocator = (*meter)(nil)

func (m *meter) Allocate(_, _ uint64) experimental.LinearMemory {
	return &meteredMemory{m: m}
}

// grow counts n more bytes for the instance. Initial allocations are
// forced (see budget.force); a growth that does not fit first has idle
// instances closed to make room.
func (m *meter) grow(n int64, initial bool) bool {
	if initial {
		m.b.force(n)
	} else if !m.b.reserve(n) {
		if m.b.makeRoom != nil {
			m.b.makeRoom(n)
		}
		if !m.b.reserve(n) {
			m.mu.Lock()
			m.refused = true
			m.mu.Unlock()
			return false
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		m.b.release(n)
		return false
	}
	m.bytes += n
	return true
}

// size reports the bytes the instance's memories hold.
func (m *meter) size() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

// wasRefused reports whether the budget refused the instance a growth.
func (m *meter) wasRefused() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refused
}

// release gives the instance's bytes back to the budget, once.
func (m *meter) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.released {
		m.released = true
		m.b.release(m.bytes)
		m.bytes = 0
	}
}

// meteredMemory backs one linear memory. Wasm memories only grow, and
// wazero frees them when their module closes.
type meteredMemory struct {
	m       *meter
	buf     []byte
	started bool // the initial allocation is done
}

func (l *meteredMemory) Reallocate(size uint64) []byte {
	initial := !l.started
	l.started = true
	if size <= uint64(len(l.buf)) {
		return l.buf[:size]
	}
	if !l.m.grow(int64(size)-int64(len(l.buf)), initial) {
		return nil // memory.grow answers -1
	}
	// append zeroes the new bytes and grows capacity geometrically, as
	// wazero's own allocation does.
	l.buf = append(l.buf, make([]byte, int(size)-len(l.buf))...)
	return l.buf
}

func (l *meteredMemory) Free() { l.buf = nil }
