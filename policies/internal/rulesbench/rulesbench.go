// Package rulesbench is the one benchmark of a shell policy's decisions,
// which the allowlist's and the blocklist's rules packages both run from
// their tests: the same typical agent commands and the same percentiles,
// so their numbers compare. It imports only the standard library, as the
// policies' shared packages must (a policy is built to Wasm).
package rulesbench

import (
	"slices"
	"testing"
	"time"
)

// Shells are typical agent commands: what a decision costs on the common
// path. A policy under benchmark must allow every one.
var Shells = []string{
	"ls -la",
	"go test ./... && git status | head -n 20",
	"grep -rn 'func main' . | sort | head -n 5",
	"find . -name '*.go' -exec grep -l TODO {} +",
	"cd src && make -j4 2>&1 | tail -n 50",
	"python3 -m pytest -q tests/test_api.py",
}

// Commands are the commands Shells run, for an allowlist that must allow
// them all.
var Commands = []string{"ls", "go", "git", "head", "grep", "sort", "find", "cd", "make", "tail", "python3"}

// Decide times decide on each of Shells in turn, as the request request
// makes of it (made before the clock starts), and reports p50 and p99 per
// call (p50-ns, p99-ns) besides the mean; a denial fails b.
func Decide[R any](b *testing.B, request func(shell string) R, decide func(R) (allow bool, reason string)) {
	reqs := make([]R, len(Shells))
	for i, s := range Shells {
		reqs[i] = request(s)
	}
	durations := make([]time.Duration, 0, 1<<18)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		ok, reason := decide(reqs[i%len(reqs)])
		d := time.Since(start)
		if !ok {
			b.Fatalf("%q: %s", Shells[i%len(reqs)], reason)
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
