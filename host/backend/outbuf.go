package backend

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
)

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

func bytesTrimSpace(b []byte) []byte { return bytes.TrimSpace(b) }

// OutputBuffer is an io.Writer that keeps at most Max bytes of what is
// written to it: the first half and the last half, and counts the bytes
// dropped between them. Memory stays bounded however much is written. It is
// safe for concurrent use.
type OutputBuffer struct {
	mu      sync.Mutex
	max     int
	head    []byte
	tail    []byte // ring buffer of the last len(tail) bytes once full
	tailPos int    // next write position in tail once it is full
	tailCap int
	dropped int64
	total   int64
}

// NewOutputBuffer returns a buffer keeping at most max bytes (max ≥ 2).
func NewOutputBuffer(max int) *OutputBuffer {
	if max < 2 {
		max = 2
	}
	h := max / 2
	return &OutputBuffer{max: max, head: make([]byte, 0, min(h, 4096)), tailCap: max - h}
}

// Write never fails and always reports len(p) written.
func (b *OutputBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	if room := b.max/2 - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	// Only the last tailCap bytes of p can survive.
	if len(p) > b.tailCap {
		b.dropped += int64(len(p) - b.tailCap)
		p = p[len(p)-b.tailCap:]
	}
	if len(b.tail) < b.tailCap {
		room := b.tailCap - len(b.tail)
		k := min(room, len(p))
		b.tail = append(b.tail, p[:k]...)
		p = p[k:]
		if len(b.tail) == b.tailCap {
			b.tailPos = 0
		}
	}
	for len(p) > 0 { // tail is full: overwrite the oldest bytes
		k := copy(b.tail[b.tailPos:], p)
		b.dropped += int64(k)
		p = p[k:]
		b.tailPos = (b.tailPos + k) % b.tailCap
	}
	return n, nil
}

// Truncated reports whether any byte was dropped.
func (b *OutputBuffer) Truncated() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped > 0
}

// Total is the number of bytes written, kept or not.
func (b *OutputBuffer) Total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// String returns the kept bytes as valid UTF-8 (invalid sequences replaced
// with U+FFFD), with a "[truncated N bytes]" marker where bytes were dropped.
func (b *OutputBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var sb strings.Builder
	sb.Grow(len(b.head) + len(b.tail) + 48)
	sb.Write(b.head)
	if b.dropped > 0 {
		fmt.Fprintf(&sb, "\n...[truncated %d bytes]...\n", b.dropped)
	}
	if len(b.tail) == b.tailCap && b.dropped > 0 {
		sb.Write(b.tail[b.tailPos:])
		sb.Write(b.tail[:b.tailPos])
	} else {
		sb.Write(b.tail)
	}
	return strings.ToValidUTF8(sb.String(), "\uFFFD")
}

// TruncatedMarker is the text every truncation marker starts with.
const TruncatedMarker = "[truncated"
