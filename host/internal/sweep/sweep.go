// Package sweep is the timing the kernel's idle reaper and the plugin
// runtime's janitor share: both look for what has been idle for a period
// a few times per period, so nothing stays held much past it.
package sweep

import (
	"context"
	"time"
)

// Every calls fn with the current time four times per idle period (at
// least every 10 ms) until ctx ends, so what has been idle for idle is
// found within about 1.25 × idle. fn runs on the calling goroutine: a
// slow fn delays the next call rather than overlapping it.
func Every(ctx context.Context, idle time.Duration, fn func(now time.Time)) {
	tick := time.NewTicker(max(idle/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			fn(now)
		}
	}
}
