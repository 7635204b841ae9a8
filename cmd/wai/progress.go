package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/wai-dev/wai/host/backend"
)

const (
	// progressAfter is how long a command runs before the status line
	// says so: a quick command should not flash a line at all.
	progressAfter = 2 * time.Second
	// progressTick is how often the line is redrawn; the text changes
	// once a second, so most ticks write nothing.
	progressTick = 250 * time.Millisecond
	// progressWidth keeps the line on one row of any usual terminal: a
	// wrapped line cannot be redrawn in place with \r.
	progressWidth = 78
)

// status is the one line of progress a CLI command shows on stderr while it
// works: a backend's slow step ("pulling image …", "starting container …")
// as soon as it begins, and the command itself once it has run for
// progressAfter. It draws only on a terminal and is erased before anything
// else is written, so the command's output never shares a row with it; on
// a pipe or file it writes nothing at all, so logs and scripts see exactly
// what they saw before.
type status struct {
	w     io.Writer
	on    bool // drawing at all: a terminal, and not turned off
	plain bool // no ANSI: erase by overwriting with spaces (TERM=dumb, NO_COLOR)
	after time.Duration
	every time.Duration
	now   func() time.Time

	mu     sync.Mutex
	label  string // the running command; "" when none
	start  time.Time
	stages []stage // the backend's steps under way, newest last
	shown  string  // the text on screen, "" when none
	stop   chan struct{}
	done   chan struct{}
}

type stage struct {
	name  string
	since time.Time
}

// newStatus returns the status line of a command writing its errors to w.
// It is on when w is a terminal, unless quiet or WAI_PROGRESS=0 turn it
// off; getenv is os.Getenv outside tests.
func newStatus(w io.Writer, quiet bool, getenv func(string) string) *status {
	term := getenv("TERM")
	return &status{
		w:     w,
		on:    !quiet && getenv("WAI_PROGRESS") != "0" && isTerminal(w),
		plain: term == "dumb" || getenv("NO_COLOR") != "",
		after: progressAfter,
		every: progressTick,
		now:   time.Now,
	}
}

// isTerminal reports whether w is a character device (a tty), without a
// dependency for it: a pipe, a file or a test's buffer is not.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// begin starts showing the command label and returns ctx carrying the
// reporter the backend's progress flows to. end stops it.
func (s *status) begin(ctx context.Context, label string) context.Context {
	if !s.on {
		return ctx
	}
	s.mu.Lock()
	s.label, s.start = truncate(label, progressWidth/2), s.now()
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	stop, done := s.stop, s.done
	s.mu.Unlock()
	go func() {
		defer close(done)
		t := time.NewTicker(s.every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.tick()
			case <-stop:
				return
			}
		}
	}()
	return backend.WithProgress(ctx, s.report)
}

// end erases the line and stops redrawing it; call it before writing the
// command's result. It may be called more than once.
func (s *status) end() {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop, s.done = nil, nil
	s.label, s.stages = "", nil
	s.clear()
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// report is the backend.ProgressFunc: it records the stage and redraws.
func (s *status) report(p backend.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.Done {
		for i := len(s.stages) - 1; i >= 0; i-- {
			if s.stages[i].name == p.Stage {
				s.stages = append(s.stages[:i], s.stages[i+1:]...)
				break
			}
		}
	} else if s.label != "" {
		s.stages = append(s.stages, stage{name: p.Stage, since: s.now()})
	}
	s.draw()
}

// tick redraws the line with the current elapsed times.
func (s *status) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.draw()
}

// Write passes p through to the underlying writer, erasing the line first
// so that a log line written while the command runs starts on a clean
// row; the next tick draws the status again below it.
func (s *status) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	return s.w.Write(p)
}

// line is the text the status shows now: the newest backend step, else
// the command once it has run long enough, else nothing.
func (s *status) line() string {
	now := s.now()
	if n := len(s.stages); n > 0 {
		st := s.stages[n-1]
		return truncate(st.name, progressWidth-8) + " …" + seconds(now.Sub(st.since))
	}
	if s.label != "" && now.Sub(s.start) >= s.after {
		return "running " + s.label + " …" + seconds(now.Sub(s.start))
	}
	return ""
}

func seconds(d time.Duration) string {
	if d < time.Second {
		return ""
	}
	return fmt.Sprintf(" %ds", int(d/time.Second))
}

// draw writes the line over the previous one when it changed. Callers hold
// s.mu.
func (s *status) draw() {
	if !s.on {
		return
	}
	text := s.line()
	switch {
	case text == s.shown:
		return
	case text == "":
		s.clear()
		return
	case s.plain:
		pad := max(0, utf8.RuneCountInString(s.shown)-utf8.RuneCountInString(text))
		_, _ = io.WriteString(s.w, "\r"+text+strings.Repeat(" ", pad))
	default:
		_, _ = io.WriteString(s.w, "\r"+text+"\x1b[K")
	}
	s.shown = text
}

// clear erases the line and leaves the cursor at the start of its row.
// Callers hold s.mu.
func (s *status) clear() {
	if s.shown == "" {
		return
	}
	if s.plain {
		_, _ = io.WriteString(s.w, "\r"+strings.Repeat(" ", utf8.RuneCountInString(s.shown))+"\r")
	} else {
		_, _ = io.WriteString(s.w, "\r\x1b[K")
	}
	s.shown = ""
}

// truncate shortens s to at most n runes, marking the cut with "…".
func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ") // one row: no newlines or tabs
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Interface guards
var _ io.Writer = (*status)(nil)
