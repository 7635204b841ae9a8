package pipedrain

import (
	"bytes"
	"os"
	"testing"
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
