package rules

import (
	"testing"

	"github.com/wai-dev/wai/policies/internal/rulesbench"
)

// BenchmarkCheck is the allowlist's decision time per typical shell
// string, in process; p50 and p99 are per call.
func BenchmarkCheck(b *testing.B) {
	p, err := New(Config{Commands: rulesbench.Commands})
	if err != nil {
		b.Fatal(err)
	}
	rulesbench.Decide(b, func(s string) Request {
		return Request{Action: "shell.exec", Command: []string{"/bin/sh", "-c", s}, Shell: s}
	}, p.Check)
}
