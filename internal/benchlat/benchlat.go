// Package benchlat keeps the durations of a benchmark's latest calls to
// report their median, the statistic wai's performance goals are stated
// in (docs/PERFORMANCE.md): on a shared machine a mean is skewed by the
// calls that were preempted. The kernel's and the Wasm runtime's
// benchmarks both use it; it imports only the standard library.
package benchlat

import (
	"slices"
	"testing"
	"time"
)

// Ring holds the latest calls' durations. Its fixed size keeps a
// benchmark's loop free of allocations. The zero value is ready.
type Ring struct {
	ring [8192]time.Duration
	n    int
}

// Add records one call's duration.
func (r *Ring) Add(d time.Duration) {
	r.ring[r.n%len(r.ring)] = d
	r.n++
}

// Report adds the median of the latest calls to b as the metric p50-ns;
// with no call recorded it adds nothing.
func (r *Ring) Report(b *testing.B) {
	d := slices.Clone(r.ring[:min(r.n, len(r.ring))])
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
}
