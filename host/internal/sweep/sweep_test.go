package sweep

import (
	"context"
	"testing"
	"time"
)

// TestEvery: fn runs repeatedly, a few times per idle period, and Every
// returns once its context ends.
func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := make(chan time.Time, 16)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		Every(ctx, 40*time.Millisecond, func(now time.Time) {
			select {
			case calls <- now:
			default:
			}
		})
	}()
	var last time.Time
	for i := 0; i < 3; i++ {
		select {
		case now := <-calls:
			if !now.After(start) || !now.After(last) {
				t.Fatalf("call %d at %v, after the start %v and the call before %v?", i, now, start, last)
			}
			last = now
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d calls in 10 s with a 40 ms idle period", i)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after its context ended")
	}
}
