//go:build linux && (amd64 || arm64)

package rootfs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

func limits(f func(*backend.Limits)) backend.Limits {
	l := backend.DefaultLimits()
	f(&l)
	return l
}

func TestStat(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "d/f.txt", "hello")
	w.symlink(t, "d/f.txt", "link")
	w.symlink(t, "missing", "dangling")
	for p, want := range map[string]struct {
		kind backend.FileKind
		path string
		name string
		size int64
	}{
		"d/f.txt":  {backend.KindFile, "d/f.txt", "f.txt", 5},
		"/d/f.txt": {backend.KindFile, "d/f.txt", "f.txt", 5},
		"link":     {backend.KindFile, "link", "link", 5}, // followed
		"d":        {backend.KindDir, "d", "d", -1},
		"":         {backend.KindDir, ".", ".", -1},
		"/":        {backend.KindDir, ".", ".", -1},
		"d/./..":   {backend.KindDir, ".", ".", -1},
	} {
		fi, err := w.fs.Stat(ctx, p)
		if err != nil {
			t.Fatalf("Stat(%q): %v", p, err)
		}
		if fi.Kind != want.kind || fi.Path != want.path || fi.Name != want.name || want.size >= 0 && fi.Size != want.size {
			t.Errorf("Stat(%q) = %+v, want %+v", p, fi, want)
		}
		if fi.ModTime.IsZero() || (fi.Kind == backend.KindDir) != fi.Mode.IsDir() {
			t.Errorf("Stat(%q): mode %v, time %v", p, fi.Mode, fi.ModTime)
		}
	}
	for _, p := range []string{"missing", "dangling", "d/f.txt/x"} {
		if _, err := w.fs.Stat(ctx, p); err == nil {
			t.Errorf("Stat(%q) succeeded", p)
		}
	}
	_, err := w.fs.Stat(ctx, "missing")
	backendtest.WantKind(t, err, backend.ErrNotFound, "no such file")
	_, err = w.fs.Stat(ctx, "d/f.txt/x")
	backendtest.WantKind(t, err, backend.ErrInvalid, "not a directory")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.fs.Stat(cancelled, "d"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stat with a cancelled context: %v", err)
	}
}

func TestList(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "b.txt", "bb")
	w.file(t, "a/inner", "")
	w.symlink(t, "a", "c-link")
	if err := syscall.Mkfifo(filepath.Join(w.root, "d-fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := w.fs.List(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Entries {
		got = append(got, fmt.Sprintf("%s:%s", e.Path, e.Kind))
	}
	want := []string{"a:dir", "b.txt:file", "c-link:symlink", "d-fifo:other"}
	if !reflect.DeepEqual(got, want) || res.Truncated {
		t.Fatalf("List(/) = %v (truncated %v), want %v", got, res.Truncated, want)
	}
	if res.Entries[1].Size != 2 {
		t.Fatalf("size of b.txt: %d", res.Entries[1].Size)
	}
	// A symlinked directory is listed through its link, paths as asked.
	res, err = w.fs.List(ctx, "c-link")
	if err != nil || len(res.Entries) != 1 || res.Entries[0].Path != "c-link/inner" {
		t.Fatalf("List(c-link) = %+v, %v", res, err)
	}
	_, err = w.fs.List(ctx, "b.txt")
	backendtest.WantKind(t, err, backend.ErrInvalid, "read it instead")
	_, err = w.fs.List(ctx, "d-fifo")
	backendtest.WantKind(t, err, backend.ErrInvalid, "not a directory")
	_, err = w.fs.List(ctx, "nope")
	backendtest.WantKind(t, err, backend.ErrNotFound, "")
	if res, err := w.fs.List(ctx, "a/inner/.."); err != nil || len(res.Entries) != 1 {
		t.Fatalf("List(a/inner/..) = %+v, %v", res, err)
	}
}

// A directory far larger than the cap is listed as its first entries in
// order, with memory kept to a multiple of the cap.
func TestListCap(t *testing.T) {
	w := newWorld(t, Options{Limits: limits(func(l *backend.Limits) { l.MaxResults = 7 })})
	var names []string
	if err := os.Mkdir(filepath.Join(w.root, "big"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1500; i++ {
		n := fmt.Sprintf("f%05d", (i*7919)%1500) // created out of order
		names = append(names, n)
		if err := syscall.Mknod(filepath.Join(w.root, "big", n), syscall.S_IFREG|0o644, 0); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(names)
	res, err := w.fs.List(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Entries {
		got = append(got, e.Name)
	}
	if !res.Truncated || !reflect.DeepEqual(got, names[:7]) {
		t.Fatalf("List(big) = %v truncated=%v, want %v", got, res.Truncated, names[:7])
	}
	res, err = w.fs.List(ctx, ".")
	if err != nil || res.Truncated || len(res.Entries) != 1 {
		t.Fatalf("a small directory is not truncated: %+v, %v", res, err)
	}
}

func TestRead(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "lines.txt", "one\ntwo\r\nthree\n\nfive")
	w.file(t, "empty.txt", "")
	w.file(t, "nl.txt", "\n")
	w.file(t, "bad-utf8.txt", "ok\xff\xfe\n")
	long := strings.Repeat("x", 200<<10)
	w.file(t, "long.txt", "a\n"+long+"\nb\n")

	read := func(p string, off, lim int) backend.ReadResult {
		t.Helper()
		res, err := w.fs.Read(ctx, backend.ReadRequest{Path: p, Offset: off, Limit: lim})
		if err != nil {
			t.Fatalf("Read(%s, %d, %d): %v", p, off, lim, err)
		}
		return res
	}
	for _, c := range []struct {
		p        string
		off, lim int
		want     []string
		total    int
	}{
		{"lines.txt", 0, 0, []string{"one", "two", "three", "", "five"}, 5},
		{"lines.txt", 1, 2, []string{"two", "three"}, 5},
		{"lines.txt", 4, 10, []string{"five"}, 5},
		{"lines.txt", 5, 0, []string{}, 5},
		{"lines.txt", 99, 1, []string{}, 5},
		{"empty.txt", 0, 0, []string{}, 0},
		{"nl.txt", 0, 0, []string{""}, 1},
		{"bad-utf8.txt", 0, 0, []string{"ok\uFFFD"}, 1},
		{"long.txt", 0, 0, []string{"a", long, "b"}, 3},
		{"long.txt", 2, 1, []string{"b"}, 3},
	} {
		res := read(c.p, c.off, c.lim)
		if !reflect.DeepEqual(res.Lines, c.want) || res.TotalLines != c.total || res.Truncated || res.Offset != c.off || res.Path != c.p {
			t.Errorf("Read(%s, %d, %d) = %q total %d truncated %v; want %q total %d",
				c.p, c.off, c.lim, trunc(res.Lines), res.TotalLines, res.Truncated, trunc(c.want), c.total)
		}
	}
	_, err := w.fs.Read(ctx, backend.ReadRequest{Path: "lines.txt", Limit: 2001})
	backendtest.WantKind(t, err, backend.ErrInvalid, "limit")
	_, err = w.fs.Read(ctx, backend.ReadRequest{Path: "lines.txt", Offset: -1})
	backendtest.WantKind(t, err, backend.ErrInvalid, "offset")
	_, err = w.fs.Read(ctx, backend.ReadRequest{Path: "."})
	backendtest.WantKind(t, err, backend.ErrInvalid, "is a directory")
	_, err = w.fs.Read(ctx, backend.ReadRequest{Path: "nope"})
	backendtest.WantKind(t, err, backend.ErrNotFound, "")
}

func trunc(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) > 20 {
			l = fmt.Sprintf("%s…(%d bytes)", l[:20], len(l))
		}
		out[i] = l
	}
	return out
}

// MaxReadBytes bounds what one Read returns: long lines are cut, and lines
// past the budget are left for the next read.
func TestReadByteBudget(t *testing.T) {
	w := newWorld(t, Options{Limits: limits(func(l *backend.Limits) { l.MaxReadBytes = 10 })})
	w.file(t, "f", "abc\ndefghijklmnop\nq\n")
	res, err := w.fs.Read(ctx, backend.ReadRequest{Path: "f"})
	if err != nil {
		t.Fatal(err)
	}
	// "abc" costs 4 bytes with its newline, leaving 6 for the second line.
	if !reflect.DeepEqual(res.Lines, []string{"abc", "defghi"}) || !res.Truncated || res.TotalLines != 3 {
		t.Fatalf("Read = %+v", res)
	}
	res, err = w.fs.Read(ctx, backend.ReadRequest{Path: "f", Offset: 2})
	if err != nil || !reflect.DeepEqual(res.Lines, []string{"q"}) || res.Truncated {
		t.Fatalf("Read from 2 = %+v, %v", res, err)
	}
}

// The line reader agrees with a plain split whatever the buffer boundaries.
func TestLineReader(t *testing.T) {
	inputs := []string{
		"", "\n", "\n\n", "a", "a\n", "a\r\n", "a\r", "\r\n\r\n", "a\rb\n", "abc\r\ndef",
		strings.Repeat("x", 15) + "\r\n" + "y", strings.Repeat("x", 16) + "\r\nz\r",
		strings.Repeat("ab\r", 20) + "\n", "line one\nline two\r\n\r\nlast",
	}
	for _, in := range inputs {
		want := strings.Split(in, "\n")
		if want[len(want)-1] == "" {
			want = want[:len(want)-1]
		}
		for i := range want {
			want[i] = strings.TrimSuffix(want[i], "\r")
		}
		for _, keep := range []int{0, 1, 3, 16, 100} {
			lr := &lineReader{r: bufio.NewReaderSize(strings.NewReader(in), 16)}
			var got []string
			for {
				line, cut, err := lr.next(keep)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				full := want[len(got)]
				exp := full[:min(keep, len(full))]
				if string(line) != exp || cut != (len(full) > keep) {
					t.Fatalf("input %q keep %d line %d: got %q cut=%v, want %q", in, keep, len(got), line, cut, exp)
				}
				got = append(got, full)
			}
			if len(got) != len(want) {
				t.Fatalf("input %q keep %d: %d lines, want %d", in, keep, len(got), len(want))
			}
		}
	}
}
