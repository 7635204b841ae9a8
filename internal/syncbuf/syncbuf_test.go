package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Writers and a reader at once: -race finds any unguarded access.
func TestConcurrentWritesAndReads(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				b.Write([]byte("x"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 800) {
		t.Fatalf("got %d bytes, want 800", len(got))
	}
}
