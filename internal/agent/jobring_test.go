//go:build linux

package agent

import (
	"path/filepath"
	"testing"

	"github.com/wai-dev/wai/internal/jobring"
)

// A window reads a ring file (internal/jobring, whose own test checks
// what it keeps) from any offset, skipping what was dropped.
func TestRingWindow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stdout")
	w, err := jobring.Create(path, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, s := range []string{"abc", "defghij", "klmnopqrstu", "vwxyz"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		since        int64
		max          int
		data         string
		offset, skip int64
	}{
		{0, 100, "abcdefgh", 0, 0},
		{5, 2, "fg", 5, 0},
		{8, 100, "stuvwxyz", 18, 10},
		{20, 3, "uvw", 20, 0},
		{99, 100, "", 26, 0},
		{-4, 3, "abc", 0, 0},
	} {
		s := window(path, 16, c.since, c.max)
		if string(s.Data) != c.data || s.Offset != c.offset || s.Skipped != c.skip || s.Total != 26 {
			t.Errorf("window(%d, %d): %q at %d skipped %d total %d; want %q at %d skipped %d",
				c.since, c.max, s.Data, s.Offset, s.Skipped, s.Total, c.data, c.offset, c.skip)
		}
	}
	// A stream within its head is one run, read across any split.
	short := filepath.Join(t.TempDir(), "stderr")
	sw, _ := jobring.Create(short, 16)
	defer sw.Close()
	_, _ = sw.Write([]byte("hello"))
	if s := window(short, 16, 1, 100); string(s.Data) != "ello" || s.Total != 5 {
		t.Errorf("short stream: %q total %d", s.Data, s.Total)
	}
}
