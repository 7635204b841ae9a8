package mcpserver

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/wai-dev/wai/host/backend"
)

// The output a progress notification carries: the last lines the call's
// commands printed since the previous notification, a preview for a person
// or a model watching a long command, not a transcript (the result has
// the output). Bounded however much the commands print.
const (
	progressOutputBytes = 2048 // of the newest output kept between notifications
	progressOutputLines = 5
	progressLineRunes   = 200
)

// outputTail keeps the newest bytes of a call's live output, both streams
// together as a terminal shows them.
type outputTail struct {
	mu    sync.Mutex
	buf   []byte // the last progressOutputBytes bytes written, oldest first
	fresh int    // how many of them are newer than the last take
}

func newOutputTail() *outputTail {
	return &outputTail{buf: make([]byte, 0, progressOutputBytes)}
}

// write is the call's backend.OutputFunc; it never blocks on the client.
func (o *outputTail) write(_ backend.Stream, p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(p) >= progressOutputBytes {
		o.buf = append(o.buf[:0], p[len(p)-progressOutputBytes:]...)
	} else {
		if over := len(o.buf) + len(p) - progressOutputBytes; over > 0 {
			o.buf = append(o.buf[:0], o.buf[over:]...)
		}
		o.buf = append(o.buf, p...)
	}
	o.fresh = min(o.fresh+len(p), len(o.buf))
}

// take returns the latest lines written since the previous take, at most
// progressOutputLines of at most progressLineRunes each, valid UTF-8; ""
// when nothing new came.
func (o *outputTail) take() string {
	o.mu.Lock()
	text := string(o.buf[len(o.buf)-o.fresh:])
	o.fresh = 0
	o.mu.Unlock()
	text = strings.ToValidUTF8(text, "\uFFFD")
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > progressOutputLines {
		lines = lines[len(lines)-progressOutputLines:]
	}
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if utf8.RuneCountInString(l) > progressLineRunes {
			l = string([]rune(l)[:progressLineRunes-1]) + "…"
		}
		lines[i] = l
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// Interface guards
var _ backend.OutputFunc = (&outputTail{}).write
