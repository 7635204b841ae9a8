package rules

import (
	"slices"
	"testing"
	"time"
)

// benchShells are typical agent commands: what a decision costs on the
// common path.
var benchShells = []string{
	"ls -la",
	"go test ./... && git status | head -n 20",
	"grep -rn 'func main' . | sort | head -n 5",
	"find . -name '*.go' -exec grep -l TODO {} +",
	"cd src && make -j4 2>&1 | tail -n 50",
	"python3 -m pytest -q tests/test_api.py",
}

// BenchmarkCheck is the blocklist's decision time per typical shell
// string, in process; p50 and p99 are per call.
func BenchmarkCheck(b *testing.B) {
	a, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]Request, len(benchShells))
	for i, s := range benchShells {
		reqs[i] = Request{Action: "shell.exec", Command: []string{"/bin/sh", "-c", s}, Shell: s}
	}
	durations := make([]time.Duration, 0, 1<<18)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		ok, reason := a.Check(reqs[i%len(reqs)])
		d := time.Since(start)
		if !ok {
			b.Fatalf("%q: %s", benchShells[i%len(reqs)], reason)
		}
		if len(durations) < cap(durations) {
			durations = append(durations, d)
		}
	}
	slices.Sort(durations)
	if n := len(durations); n > 0 {
		b.ReportMetric(float64(durations[n/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(durations[n*99/100].Nanoseconds()), "p99-ns")
	}
}
