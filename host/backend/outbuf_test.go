package backend

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// kept returns the head and the tail in input order.
func (b *OutputBuffer) kept() (head, tail []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	head = append([]byte(nil), b.head...)
	if len(b.tail) == b.tailCap && b.dropped > 0 {
		tail = append(append([]byte(nil), b.tail[b.tailPos:]...), b.tail[:b.tailPos]...)
	} else {
		tail = append([]byte(nil), b.tail...)
	}
	return head, tail
}

// checkBuffer verifies every invariant of a buffer that was fed in.
func checkBuffer(t *testing.T, b *OutputBuffer, max int, in []byte) {
	t.Helper()
	head, tail := b.kept()
	switch {
	case len(head)+len(tail) > max:
		t.Fatalf("keeps %d+%d bytes, over the cap %d", len(head), len(tail), max)
	case !bytes.HasPrefix(in, head):
		t.Fatalf("head %q is not a prefix of the input", head)
	case !bytes.HasSuffix(in, tail):
		t.Fatalf("tail %q is not a suffix of the input", tail)
	case b.Total() != int64(len(in)):
		t.Fatalf("total %d, wrote %d", b.Total(), len(in))
	}
	dropped := len(in) - len(head) - len(tail)
	if b.Truncated() != (dropped > 0) {
		t.Fatalf("Truncated() = %v with %d bytes dropped", b.Truncated(), dropped)
	}
	s := b.String()
	if !utf8.ValidString(s) {
		t.Fatalf("String() is not valid UTF-8")
	}
	marker := fmt.Sprintf("\n...%s %d bytes]...\n", TruncatedMarker, dropped)
	if dropped > 0 {
		// Everything fits while nothing is dropped; once something is, both
		// halves are full.
		if len(head) != max/2 || len(tail) != max-max/2 {
			t.Fatalf("dropped %d bytes but keeps only %d+%d of %d", dropped, len(head), len(tail), max)
		}
		if want := strings.ToValidUTF8(string(head)+marker+string(tail), "\uFFFD"); s != want {
			t.Fatalf("String() = %q, want %q", s, want)
		}
	} else {
		if len(head)+len(tail) != len(in) {
			t.Fatalf("nothing dropped, but keeps %d of %d bytes", len(head)+len(tail), len(in))
		}
		if want := strings.ToValidUTF8(string(in), "\uFFFD"); s != want {
			t.Fatalf("String() = %q, want the input %q", s, want)
		}
	}
}

func TestOutputBuffer(t *testing.T) {
	for _, c := range []struct {
		max    int
		writes []string
		want   string
	}{
		{10, []string{"hello"}, "hello"},
		{10, []string{"0123456789"}, "0123456789"},
		{10, []string{"0123456789a"}, "01234\n...[truncated 1 bytes]...\n6789a"},
		{10, []string{"01234", "56789", "abcdef"}, "01234\n...[truncated 6 bytes]...\nbcdef"},
		{10, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b"}, "01234\n...[truncated 2 bytes]...\n789ab"},
		{11, []string{strings.Repeat("x", 5) + strings.Repeat("y", 100) + "zzzzzz"}, "xxxxx\n...[truncated 100 bytes]...\nzzzzzz"},
		{1, []string{"abc"}, "a\n...[truncated 1 bytes]...\nc"}, // max below 2 is raised to 2
		{10, []string{"", ""}, ""},
	} {
		b := NewOutputBuffer(c.max)
		for _, w := range c.writes {
			if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", w, n, err)
			}
		}
		if got := b.String(); got != c.want {
			t.Errorf("max %d writes %q: %q, want %q", c.max, c.writes, got, c.want)
		}
		checkBuffer(t, b, max(c.max, 2), []byte(strings.Join(c.writes, "")))
	}
	// A rune cut by the truncation is replaced, not emitted half.
	b := NewOutputBuffer(8)
	b.Write([]byte("aaaé" + strings.Repeat("-", 20) + "ébbb"))
	if s := b.String(); !utf8.ValidString(s) || !strings.HasPrefix(s, "aaa\uFFFD") || !strings.HasSuffix(s, "\uFFFDbbb") {
		t.Fatalf("cut runes: %q", s)
	}
	// Memory stays at the cap whatever is written.
	b = NewOutputBuffer(64)
	chunk := bytes.Repeat([]byte("z"), 1<<16)
	for range 100 {
		b.Write(chunk)
	}
	if cap(b.head)+cap(b.tail) > 4*64 {
		t.Fatalf("buffer grew to %d+%d bytes of capacity", cap(b.head), cap(b.tail))
	}
	if n := testing.AllocsPerRun(100, func() { b.Write(chunk) }); n != 0 {
		t.Fatalf("a write into a full buffer allocates %v times", n)
	}
}

func TestOutputBufferConcurrent(t *testing.T) {
	b := NewOutputBuffer(1 << 10)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				b.Write([]byte{byte('a' + i)})
			}
		}()
	}
	wg.Wait()
	if b.Total() != 8000 || !b.Truncated() || len(b.String()) > 1<<10+48 {
		t.Fatalf("total %d truncated %v length %d", b.Total(), b.Truncated(), len(b.String()))
	}
}

// FuzzOutputBuffer feeds arbitrary bytes in arbitrary chunks into buffers
// of arbitrary caps: kept bytes never exceed the cap, the head is a prefix
// and the tail a suffix of the input, and the marker appears exactly when
// bytes were dropped, with their count.
func FuzzOutputBuffer(f *testing.F) {
	f.Add(10, []byte("hello world, this is more than ten bytes"), []byte{3, 1, 4, 1, 5, 9, 2, 6})
	f.Add(64, bytes.Repeat([]byte("é"), 100), []byte{7})
	f.Add(2, []byte("ab"), []byte{})
	f.Add(33, []byte("[truncated 5 bytes] in the input itself"), []byte{0, 0, 200})
	f.Fuzz(func(t *testing.T, max int, in, chunks []byte) {
		max = 2 + (max%4096+4096)%4096
		b := NewOutputBuffer(max)
		rest := in
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if len(chunks) > 0 {
				n = min(n, int(chunks[i%len(chunks)])) // 0 is an empty write
			}
			b.Write(rest[:n])
			rest = rest[n:]
			if i > 10*len(in)+10 {
				break // only zero-sized chunks: feed the rest at once
			}
		}
		if len(rest) > 0 {
			b.Write(rest)
		}
		checkBuffer(t, b, max, in)
	})
}
