//go:build linux && (amd64 || arm64)

package host

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// BenchmarkExecuteTrue is the whole cost of one host command: limits,
// cwd resolution, PATH lookup, process group, pipes, waiting and the kill
// of the group. Compare with BenchmarkBareOsExecTrue (goal: ≤ 1.2×).
func BenchmarkExecuteTrue(b *testing.B) {
	w := openWS(b, "")
	req := backend.ExecRequest{Argv: []string{"true"}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := w.Shell().Execute(bg, req)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("true: %+v, %v", res, err)
		}
	}
}

// BenchmarkBareOsExecTrue is the floor: os/exec running the same program,
// output to /dev/null, and nothing else.
func BenchmarkBareOsExecTrue(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareOsExecTrueCaptured is os/exec capturing both streams, as
// Execute does.
func BenchmarkBareOsExecTrueCaptured(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var out, errb strings.Builder
		cmd := exec.Command("true")
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCapture100MB reports what capturing 100 MB of output costs in
// memory: B/op stays near the 2×32 KiB cap, not the 100 MB printed.
func BenchmarkCapture100MB(b *testing.B) {
	w := openWS(b, "")
	req := backend.ExecRequest{Argv: []string{"head", "-c", "100000000", "/dev/zero"}}
	b.ReportAllocs()
	b.SetBytes(100_000_000)
	for b.Loop() {
		res, err := w.Shell().Execute(bg, req)
		if err != nil || !res.Truncated {
			b.Fatalf("100 MB: %v, truncated %v", err, res.Truncated)
		}
	}
}
