package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/syncbuf"
)

// screen replays what a terminal shows for b: \r returns to the start of
// the row, ESC[K erases to its end, \n starts a new row, anything else
// overwrites the cell under the cursor.
func screen(b []byte) string {
	rows := [][]rune{nil}
	col := 0
	s := []rune(string(b))
	for i := 0; i < len(s); i++ {
		row := &rows[len(rows)-1]
		switch {
		case s[i] == '\r':
			col = 0
		case s[i] == '\n':
			rows = append(rows, nil)
			col = 0
		case s[i] == '\x1b' && i+2 < len(s) && s[i+1] == '[' && s[i+2] == 'K':
			*row = (*row)[:min(col, len(*row))]
			i += 2
		default:
			for len(*row) <= col {
				*row = append(*row, ' ')
			}
			(*row)[col] = s[i]
			col++
		}
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		// Trailing blanks are what the plain mode erases with.
		out[i] = strings.TrimRight(string(r), " ")
	}
	return strings.Join(out, "\n")
}

// clock is a fake time source the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// terminalStatus is a status drawing into a buffer as if it were a
// terminal, on a fake clock; its own ticker never fires during a test, so
// the test's tick calls are the only redraws.
func terminalStatus(plain bool) (*status, *syncbuf.Buffer, *clock) {
	buf := &syncbuf.Buffer{}
	c := &clock{t: time.Unix(1e9, 0)}
	return &status{w: buf, on: true, plain: plain, after: 2 * time.Second, every: time.Hour, now: c.now}, buf, c
}

func TestStatusOnTerminal(t *testing.T) {
	for _, plain := range []bool{false, true} {
		st, buf, c := terminalStatus(plain)
		row := func() string {
			lines := strings.Split(screen(buf.Bytes()), "\n")
			return lines[len(lines)-1]
		}
		ctx := st.begin(context.Background(), "sleep  4\n")
		if got := screen(buf.Bytes()); got != "" {
			t.Errorf("plain=%v: a command that just started shows %q", plain, got)
		}
		// A backend step shows at once, with its time once it passes 1 s.
		done := backend.StartProgress(ctx, "starting container wai-s1")
		if got := row(); got != "starting container wai-s1 …" {
			t.Errorf("plain=%v: stage row %q", plain, got)
		}
		c.add(1500 * time.Millisecond)
		st.tick()
		if got := row(); got != "starting container wai-s1 … 1s" {
			t.Errorf("plain=%v: stage row after 1.5s %q", plain, got)
		}
		// Done, and the command is still under the threshold: nothing.
		done()
		if got := row(); got != "" {
			t.Errorf("plain=%v: after the stage, under the threshold: %q", plain, got)
		}
		// Past the threshold the command itself ticks.
		c.add(time.Second)
		st.tick()
		if got := row(); got != "running sleep 4 … 2s" {
			t.Errorf("plain=%v: command row %q", plain, got)
		}
		c.add(time.Second)
		st.tick()
		if got := row(); got != "running sleep 4 … 3s" {
			t.Errorf("plain=%v: command row a second later %q", plain, got)
		}
		// A log line in the middle gets a clean row; the status returns
		// below it on the next tick.
		_, _ = st.Write([]byte("time=… level=INFO msg=shell.exec\n"))
		if got := screen(buf.Bytes()); got != "time=… level=INFO msg=shell.exec\n" {
			t.Errorf("plain=%v: a log line shares its row with the status: %q", plain, got)
		}
		st.tick()
		if got := row(); got != "running sleep 4 … 3s" {
			t.Errorf("plain=%v: status after the log line %q", plain, got)
		}
		// end erases it before the output, which then stands alone.
		st.end()
		st.end()
		_, _ = buf.Write([]byte("out\n"))
		if got := screen(buf.Bytes()); got != "time=… level=INFO msg=shell.exec\nout\n" {
			t.Errorf("plain=%v: the screen after the result is %q, want the log line and the output only", plain, got)
		}
		if esc := bytes.Contains(buf.Bytes(), []byte("\x1b")); esc == plain {
			t.Errorf("plain=%v: escape sequences written: %v", plain, esc)
		}
		// Reports after end (a late Done, a stray stage) draw nothing.
		n := len(buf.Bytes())
		backend.StartProgress(ctx, "late")()
		st.tick()
		if len(buf.Bytes()) != n {
			t.Errorf("plain=%v: the status drew after end: %q", plain, buf.Bytes()[n:])
		}
	}
}

// A quick command never shows a line: nothing is written at all.
func TestStatusQuickCommandSilent(t *testing.T) {
	st, buf, c := terminalStatus(false)
	st.begin(context.Background(), "true")
	c.add(1900 * time.Millisecond)
	st.tick()
	st.end()
	if b := buf.Bytes(); len(b) != 0 {
		t.Errorf("a command under the threshold wrote %q", b)
	}
}

// Nested stages show the newest; when it ends the outer one returns.
func TestStatusNestedStages(t *testing.T) {
	st, buf, _ := terminalStatus(false)
	ctx := st.begin(context.Background(), "x")
	defer st.end()
	outer := backend.StartProgress(ctx, "starting container c")
	inner := backend.StartProgress(ctx, "pulling image i")
	if got := screen(buf.Bytes()); got != "pulling image i …" {
		t.Errorf("two stages show %q, want the newest", got)
	}
	inner()
	if got := screen(buf.Bytes()); got != "starting container c …" {
		t.Errorf("after the inner stage: %q, want the outer one", got)
	}
	outer()
	if got := screen(buf.Bytes()); got != "" {
		t.Errorf("after both: %q", got)
	}
}

// Piped or turned off, the status writes nothing whatever happens.
func TestStatusOffWhenPipedOrQuiet(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// /dev/null is a character device, so it stands in for a terminal.
	tty, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	var buf bytes.Buffer
	for _, c := range []struct {
		name      string
		st        *status
		on, plain bool
	}{
		{"pipe", newStatus(w, false, env()), false, false},
		{"buffer", newStatus(&buf, false, env()), false, false},
		{"terminal", newStatus(tty, false, env("TERM", "xterm")), true, false},
		{"terminal -q", newStatus(tty, true, env()), false, false},
		{"terminal WAI_PROGRESS=0", newStatus(tty, false, env("WAI_PROGRESS", "0")), false, false},
		{"terminal TERM=dumb", newStatus(tty, false, env("TERM", "dumb")), true, true},
		{"terminal NO_COLOR", newStatus(tty, false, env("NO_COLOR", "1")), true, true},
	} {
		if c.st.on != c.on || c.st.plain != c.plain {
			t.Errorf("%s: on=%v plain=%v, want on=%v plain=%v", c.name, c.st.on, c.st.plain, c.on, c.plain)
		}
	}
	st := newStatus(&buf, false, env())
	c := &clock{t: time.Unix(1e9, 0)}
	st.now = c.now
	ctx := st.begin(context.Background(), "sleep 10")
	backend.StartProgress(ctx, "pulling image i")()
	c.add(time.Minute)
	st.tick()
	_, _ = st.Write([]byte("log\n"))
	st.end()
	if buf.String() != "log\n" {
		t.Errorf("a piped status wrote %q, want only the log line passed through", buf.String())
	}
}

// The built binary with stderr on a pipe: a command past the threshold
// prints exactly its own output, no progress bytes.
func TestExecQuietWhenPiped(t *testing.T) {
	t.Parallel()
	r := newEnv(t, "").run("exec", "-c", "sleep 2.3; echo done")
	if r.code != 0 || r.stdout != "done\n" || r.stderr != "" {
		t.Fatalf("want done on stdout and an empty stderr; got %v", r)
	}
}
