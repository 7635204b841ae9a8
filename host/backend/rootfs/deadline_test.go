//go:build linux && (amd64 || arm64)

package rootfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

// sparse creates rel in the world's root as a sparse file of size bytes
// whose first bytes are head: reading it costs the CPU time of reading
// size bytes of zeros, but no disk space.
func (w *world) sparse(t *testing.T, rel, head string, size int64) {
	t.Helper()
	p := filepath.Join(w.root, rel)
	if err := os.WriteFile(p, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Skipf("the test file system cannot hold a sparse file of %d bytes: %v", size, err)
	}
}

// textHead is 8 KiB of text lines, none of which contains "needle".
func textHead() string {
	var b strings.Builder
	for b.Len() < 8<<10 {
		b.WriteString("a line of ordinary text in front of a very large hole\n")
	}
	return b.String()
}

// withinDeadline runs op under a short deadline and fails the test if op
// does not return within the deadline plus generous slack, or returns
// anything but an error that wraps context.DeadlineExceeded. Without
// byte-bounded checks op runs for many minutes: the watchdog turns that
// hang into a failure (the abandoned goroutine is left to the process).
func withinDeadline(t *testing.T, what string, op func(ctx context.Context) error) {
	t.Helper()
	const deadline, slack = 1 * time.Second, 10 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- op(ctx) }()
	select {
	case err := <-done:
		took := time.Since(start)
		t.Logf("%s returned after %s: %v", what, took.Round(time.Millisecond), err)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: error %v, want one wrapping context.DeadlineExceeded", what, err)
		}
		if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "deadline") {
			t.Fatalf("%s: error %q, want ErrUnavailable saying the deadline stopped it", what, err)
		}
	case <-time.After(deadline + slack):
		t.Fatalf("%s still running %s after its %s deadline: file-system loops do not honour the context", what, slack, deadline)
	}
}

// TestDeadlineSparseFiles: reading or searching files that are huge but
// cost nothing to make (8 TiB of hole; 200 GB of hole after 8 KiB of text)
// stops at the deadline instead of spinning the host's CPU for minutes.
func TestDeadlineSparseFiles(t *testing.T) {
	w := newWorld(t, Options{})
	w.sparse(t, "big", "", 8<<40)
	w.sparse(t, "holed.txt", textHead(), 200<<30)
	w.file(t, "tree/small.txt", "needle is not here\n")
	for _, p := range []string{"big", "holed.txt"} {
		withinDeadline(t, "Read("+p+", offset past the text)", func(ctx context.Context) error {
			_, err := w.fs.Read(ctx, backend.ReadRequest{Path: p, Offset: 1000, Limit: 10})
			return err
		})
	}
	withinDeadline(t, "Grep(holed.txt)", func(ctx context.Context) error {
		_, err := w.fs.Grep(ctx, backend.GrepRequest{Pattern: "needle", Path: "holed.txt"})
		return err
	})
	withinDeadline(t, "Grep(the whole root)", func(ctx context.Context) error {
		_, err := w.fs.Grep(ctx, backend.GrepRequest{Pattern: "needle"})
		return err
	})
}

// TestDeadlineEndlessLine: a line with no end is read in bounded memory
// (cut at the read limit) and stops at the deadline.
func TestDeadlineEndlessLine(t *testing.T) {
	w := newWorld(t, Options{Limits: limits(func(l *backend.Limits) { l.MaxReadBytes = 64 << 10 })})
	w.sparse(t, "nul", "x", 8<<40) // one 8 TiB line: "x" and NULs
	withinDeadline(t, "Read(one 8 TiB line)", func(ctx context.Context) error {
		_, err := w.fs.Read(ctx, backend.ReadRequest{Path: "nul"})
		return err
	})
	// The line is cut to the read limit however long it is, and what is
	// allocated does not grow with it.
	w.sparse(t, "long", "y", 32<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := w.fs.Read(ctx, backend.ReadRequest{Path: "long"})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lines) != 1 || len(res.Lines[0]) > 64<<10 || !res.Truncated {
		t.Fatalf("a 32 MiB line read with a 64 KiB limit: %d lines, first %d bytes, truncated %v", len(res.Lines), len(res.Lines[0]), res.Truncated)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("reading a 32 MiB line with a 64 KiB limit allocated %d bytes: the line is accumulated", alloc)
	}
}

// TestDeadlineEveryOperation: every operation given a context whose
// deadline has passed fails with the deadline error and changes nothing.
func TestDeadlineEveryOperation(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "d/f.txt", "old\n")
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	ops := map[string]func() error{
		"Stat": func() error { _, err := w.fs.Stat(expired, "d/f.txt"); return err },
		"List": func() error { _, err := w.fs.List(expired, "d"); return err },
		"Read": func() error { _, err := w.fs.Read(expired, backend.ReadRequest{Path: "d/f.txt"}); return err },
		"Glob": func() error { _, err := w.fs.Glob(expired, backend.GlobRequest{Pattern: "**"}); return err },
		"Grep": func() error { _, err := w.fs.Grep(expired, backend.GrepRequest{Pattern: "old"}); return err },
		"Write": func() error {
			_, err := w.fs.Write(expired, backend.WriteRequest{Path: "d/new", Content: "x"})
			return err
		},
		"Edit": func() error {
			_, err := w.fs.Edit(expired, backend.EditRequest{Path: "d/f.txt", Old: "old", New: "new"})
			return err
		},
		"Remove": func() error {
			_, err := w.fs.Remove(expired, backend.RemoveRequest{Path: "d", Recursive: true})
			return err
		},
	}
	for name, op := range ops {
		err := op()
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, backend.ErrUnavailable) {
			t.Errorf("%s with an expired deadline: error %v, want ErrUnavailable wrapping context.DeadlineExceeded", name, err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(w.root, "d/f.txt")); err != nil || string(data) != "old\n" {
		t.Errorf("d/f.txt after the expired calls: %q, %v", data, err)
	}
	if _, err := os.Lstat(filepath.Join(w.root, "d/new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Write with an expired deadline created its file: %v", err)
	}
}

// TestEditBoundsItsResult: replacing every occurrence cannot make a file
// larger than edit may load, however the sizes multiply.
func TestEditBoundsItsResult(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "as", strings.Repeat("a", 1<<20))
	_, err := w.fs.Edit(ctx, backend.EditRequest{Path: "as", Old: "a", New: strings.Repeat("b", 100), ReplaceAll: true})
	backendtest.WantKind(t, err, backend.ErrInvalid, "over the")
	if fi, err := os.Stat(filepath.Join(w.root, "as")); err != nil || fi.Size() != 1<<20 {
		t.Fatalf("the file after a refused edit: %v, %v", fi, err)
	}
}
