package pipedrain

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"testing"
	"time"
)

func TestRestTakesBufferedBytes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := w.WriteString("held back by a slow reader\n"); err != nil {
		t.Fatal(err)
	}
	Stop(r)
	if _, err := r.Read(make([]byte, 8)); !Stopped(err) {
		t.Fatalf("a read after Stop returned %v, want the deadline", err)
	}
	var got bytes.Buffer
	// A small buffer: the rest comes in several pieces.
	if Rest(r, make([]byte, 5), func(p []byte) { got.Write(p) }) {
		t.Fatal("Rest reported end of file while the write end is open")
	}
	if got.String() != "held back by a slow reader\n" {
		t.Fatalf("Rest took %q", got.String())
	}
	if _, err := w.WriteString("last"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got.Reset()
	if !Rest(r, make([]byte, 64), func(p []byte) { got.Write(p) }) || got.String() != "last" {
		t.Fatalf("after the writer closed: eof false or took %q", got.String())
	}
}

// Wait returns within its bound while a writer holds a pipe, with what
// was written before taken, and closes the pipes.
func TestWaitBoundsAHeldPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() // held for the whole test, as by a leftover process
	if _, err := w.WriteString("early"); err != nil {
		t.Fatal(err)
	}
	var readers sync.WaitGroup
	var got bytes.Buffer
	held := false
	readers.Add(1)
	go func() {
		defer readers.Done()
		b := make([]byte, 64)
		for {
			n, err := r.Read(b)
			got.Write(b[:n])
			if Stopped(err) {
				held = !Rest(r, b, func(p []byte) { got.Write(p) })
				return
			}
			if err != nil {
				return
			}
		}
	}()
	start := time.Now()
	Wait(&readers, 50*time.Millisecond, r)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Wait took %s for a 50ms bound", took)
	}
	if got.String() != "early" || !held {
		t.Fatalf("took %q, held %v: want what was written, and the writer seen", got.String(), held)
	}
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("the pipe is not closed: %v", err)
	}
}
