package mcpserver

import (
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// The tail keeps only the newest lines since the last take, bounded in
// lines, runes per line and bytes however much is written.
func TestOutputTailBounds(t *testing.T) {
	o := newOutputTail()
	if got := o.take(); got != "" {
		t.Errorf("empty tail: %q", got)
	}
	for i := range 10000 {
		o.write(backend.Stdout, []byte(strings.Repeat("x", i%300)+"\n"))
	}
	got := o.take()
	lines := strings.Split(got, "\n")
	if len(lines) > progressOutputLines {
		t.Errorf("%d lines, want at most %d", len(lines), progressOutputLines)
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > progressLineRunes {
			t.Errorf("a line of %d runes, want at most %d", n, progressLineRunes)
		}
	}
	if cap(o.buf) > progressOutputBytes {
		t.Errorf("buffer grew to %d bytes, want at most %d", cap(o.buf), progressOutputBytes)
	}
	if got := o.take(); got != "" {
		t.Errorf("second take with nothing new: %q", got)
	}
	o.write(backend.Stderr, []byte("partial \xff line"))
	if got := o.take(); got != "partial \uFFFD line" {
		t.Errorf("new partial line: %q", got)
	}
}
