//go:build linux

package jobring

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The file keeps the first and last halves of its budget, never grows
// past it, and reads back head, tail (oldest first) and the total.
func TestHeadAndTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stdout")
	w, err := Create(path, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if head, tail, total := Read(path, 16); len(head) != 0 || len(tail) != 0 || total != 0 {
		t.Fatalf("empty ring: %q %q %d", head, tail, total)
	}
	for _, s := range []string{"abc", "defghij", "klmnopqrstu", "vwxyz"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	head, tail, total := Read(path, 16)
	if string(head) != "abcdefgh" || string(tail) != "stuvwxyz" || total != 26 {
		t.Fatalf("ring: head %q tail %q total %d", head, tail, total)
	}
	if _, err := w.Write(bytes.Repeat([]byte("y"), 1<<16)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil {
		t.Fatal(err)
	} else if fi.Size() > 8+16 {
		t.Errorf("the file grew past its budget: %d bytes", fi.Size())
	}
	// Far more than the budget in one write keeps its last bytes.
	big := filepath.Join(t.TempDir(), "big")
	bw, err := Create(big, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer bw.Close()
	if _, err := bw.Write(append(bytes.Repeat([]byte("x"), 1000), "TAILTAIL"...)); err != nil {
		t.Fatal(err)
	}
	if _, tail, total := Read(big, 16); string(tail) != "TAILTAIL" || total != 1008 {
		t.Errorf("one big write: tail %q total %d", tail, total)
	}
	if _, err := Create(path, 16); err == nil {
		t.Error("Create over an existing ring file succeeded")
	}
	if head, tail, total := Read(filepath.Join(t.TempDir(), "missing"), 16); head != nil || tail != nil || total != 0 {
		t.Errorf("a missing file: %q %q %d", head, tail, total)
	}
}
