//go:build linux && (amd64 || arm64)

package host

import (
	"os/exec"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Output already in the pipes when drain stops waiting is kept. CI lost
// a command's whole stdout this way: under load the copying goroutine had
// not run yet when the bound passed, and closing the pipe dropped it.
// A zero bound makes that the common case here.
func TestDrainKeepsBufferedOutput(t *testing.T) {
	for i := range 20 {
		var out output
		var live []byte
		c := exec.Command("sh", "-c", "echo out; echo err >&2")
		if err := out.start(c, 1<<15, func(s backend.Stream, p []byte) {
			if s == backend.Stdout {
				live = append(live, p...)
			}
		}); err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			out.abort()
			t.Fatal(err)
		}
		out.started()
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
		if !out.drain(0) {
			t.Fatalf("run %d: drain reports a held pipe, yet the command and its writers are gone", i)
		}
		if got, gotErr := out.stdout.String(), out.stderr.String(); got != "out\n" || gotErr != "err\n" || string(live) != "out\n" {
			t.Fatalf("run %d: stdout %q, stderr %q, live %q: output in the pipes was lost", i, got, gotErr, live)
		}
	}
}

// A writer that keeps the pipe open is reported, and what it wrote
// before the bound is kept.
func TestDrainReportsHeldPipe(t *testing.T) {
	var out output
	c := exec.Command("sh", "-c", "echo early; exec sleep 5")
	if err := out.start(c, 1<<15, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		out.abort()
		t.Fatal(err)
	}
	defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	out.started()
	deadline := time.Now().Add(10 * time.Second)
	for out.stdout.String() == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if out.drain(50 * time.Millisecond) {
		t.Fatal("drain reports every pipe closed while sleep still holds them")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("drain waited %s for a held pipe", took)
	}
	if got := out.stdout.String(); got != "early\n" {
		t.Fatalf("stdout %q, want what was written before the bound", got)
	}
}
