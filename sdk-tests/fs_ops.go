package sdktests

import (
	"fmt"
	"slices"

	"github.com/wai-dev/wai/host/backend"
)

// lines reads a whole file as lines, failing the check on error.
func lines(t *T, w *ws, path string) []string {
	t.Helper()
	res, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: path})
	if err != nil {
		t.Fatalf("Read(%s): %v", path, err)
	}
	return res.Lines
}

func wantLines(t *T, w *ws, path string, want ...string) {
	t.Helper()
	if got := lines(t, w, path); !slices.Equal(got, want) {
		t.Errorf("%s holds %q, want %q", path, got, want)
	}
}

func stat(t *T, w *ws, path string) backend.FileInfo {
	t.Helper()
	fi, err := w.FS().Stat(t.Context(), path)
	if err != nil {
		t.Fatalf("Stat(%s): %v", path, err)
	}
	return fi
}

func checkStat(t *T, w *ws) {
	w.write("a/b.txt", "hello\n")
	fi := stat(t, w, "a/b.txt")
	if fi.Path != "a/b.txt" || fi.Name != "b.txt" || fi.Kind != backend.KindFile || fi.Size != 6 || fi.Mode.IsDir() {
		t.Errorf("Stat(a/b.txt) = %+v, want path a/b.txt, name b.txt, a 6-byte file", fi)
	}
	if fi.ModTime.IsZero() {
		t.Errorf("Stat(a/b.txt) has no modification time")
	}
	fi = stat(t, w, "a")
	if fi.Path != "a" || fi.Name != "a" || fi.Kind != backend.KindDir || !fi.Mode.IsDir() {
		t.Errorf("Stat(a) = %+v, want directory a", fi)
	}
}

func checkStatRoot(t *T, w *ws) {
	w.write("a/b.txt", "x")
	for _, p := range []string{"", ".", "/", "a/..", "/a/../", "./"} {
		fi := stat(t, w, p)
		if fi.Kind != backend.KindDir || fi.Path != "." {
			t.Errorf("Stat(%q) = %+v, want the root: a directory with path \".\"", p, fi)
		}
	}
}

func checkStatNormalizes(t *T, w *ws) {
	w.write("a/b.txt", "x")
	for _, p := range []string{"/a/./b.txt", "a//b.txt", "./a/b.txt", "a/../a/b.txt"} {
		if fi := stat(t, w, p); fi.Path != "a/b.txt" {
			t.Errorf("Stat(%q).Path = %q, want the clean path a/b.txt", p, fi.Path)
		}
	}
}

func checkStatMissing(t *T, w *ws) {
	w.write("f.txt", "x")
	_, err := w.FS().Stat(t.Context(), "missing.txt")
	wantKind(t, "Stat(missing.txt)", err, backend.ErrNotFound)
	_, err = w.FS().Stat(t.Context(), "f.txt/below")
	if k := backend.KindOf(err); k != backend.ErrNotFound && k != backend.ErrInvalid {
		t.Errorf("Stat(f.txt/below) with f.txt a file: error %v of kind %v, want ErrNotFound or ErrInvalid", err, k)
	}
}

func checkNULPath(t *T, w *ws) {
	ctx := t.Context()
	fs := w.FS()
	const p = "a\x00b"
	calls := map[string]func() error{
		"Stat":   func() error { _, err := fs.Stat(ctx, p); return err },
		"List":   func() error { _, err := fs.List(ctx, p); return err },
		"Read":   func() error { _, err := fs.Read(ctx, backend.ReadRequest{Path: p}); return err },
		"Write":  func() error { _, err := fs.Write(ctx, backend.WriteRequest{Path: p, Content: "x"}); return err },
		"Edit":   func() error { _, err := fs.Edit(ctx, backend.EditRequest{Path: p, Old: "x", New: "y"}); return err },
		"Glob":   func() error { _, err := fs.Glob(ctx, backend.GlobRequest{Pattern: "*", Path: p}); return err },
		"Grep":   func() error { _, err := fs.Grep(ctx, backend.GrepRequest{Pattern: "x", Path: p}); return err },
		"Remove": func() error { _, err := fs.Remove(ctx, backend.RemoveRequest{Path: p}); return err },
	}
	for name, call := range calls {
		wantKind(t, name+" of a path with a NUL byte", call(), backend.ErrInvalid)
	}
}

func checkListSorted(t *T, w *ws) {
	for _, f := range []string{"d/b.txt", "d/a.txt", "d/C.txt", "d/sub/x.txt"} {
		w.write(f, "12345")
	}
	res, err := w.FS().List(t.Context(), "d")
	if err != nil {
		t.Fatalf("List(d): %v", err)
	}
	var got []string
	for _, e := range res.Entries {
		got = append(got, fmt.Sprintf("%s|%s|%s", e.Name, e.Path, e.Kind))
	}
	want := []string{"C.txt|d/C.txt|file", "a.txt|d/a.txt|file", "b.txt|d/b.txt|file", "sub|d/sub|dir"}
	if !slices.Equal(got, want) || res.Truncated {
		t.Errorf("List(d) = %q (truncated %v), want %q sorted by name", got, res.Truncated, want)
	}
	for _, e := range res.Entries {
		if e.Kind == backend.KindFile && e.Size != 5 {
			t.Errorf("List(d): %s has size %d, want 5", e.Name, e.Size)
		}
	}
	if names := listNames(t, w, "/"); !slices.Equal(names, []string{"d"}) {
		t.Errorf("List(/) = %q, want [d]", names)
	}
	if _, err := w.FS().Remove(t.Context(), backend.RemoveRequest{Path: "d/sub/x.txt"}); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if res, err := w.FS().List(t.Context(), "d/sub"); err != nil || len(res.Entries) != 0 {
		t.Errorf("List of an empty directory = %+v, %v; want no entries and no error", res, err)
	}
}

func checkListErrors(t *T, w *ws) {
	w.write("f.txt", "x")
	_, err := w.FS().List(t.Context(), "f.txt")
	wantKind(t, "List of a file", err, backend.ErrInvalid)
	_, err = w.FS().List(t.Context(), "missing")
	wantKind(t, "List of a missing directory", err, backend.ErrNotFound)
}

func checkListCapped(t *T, w *ws) {
	for i := range 5 {
		w.write(fmt.Sprintf("five/f%d", i), "x")
		w.write(fmt.Sprintf("seven/f%d", i), "x")
	}
	w.write("seven/f5", "x")
	w.write("seven/f6", "x")
	res, err := w.FS().List(t.Context(), "five")
	if err != nil || len(res.Entries) != 5 || res.Truncated {
		t.Errorf("List of 5 entries at MaxResults 5: %d entries, truncated %v, err %v; want all 5, not truncated", len(res.Entries), res.Truncated, err)
	}
	res, err = w.FS().List(t.Context(), "seven")
	if err != nil || len(res.Entries) != 5 || !res.Truncated {
		t.Fatalf("List of 7 entries at MaxResults 5: %d entries, truncated %v, err %v; want 5, truncated", len(res.Entries), res.Truncated, err)
	}
	for i, e := range res.Entries {
		if want := fmt.Sprintf("f%d", i); e.Name != want {
			t.Errorf("capped List entry %d is %s, want %s: the first entries by name", i, e.Name, want)
		}
	}
}
