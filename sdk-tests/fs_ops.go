package sdktests

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

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

func checkReadLines(t *T, w *ws) {
	w.write("r.txt", "one\ntwo\nthree\n")
	res, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: "/r.txt"})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if !slices.Equal(res.Lines, []string{"one", "two", "three"}) || res.TotalLines != 3 || res.Offset != 0 || res.Path != "r.txt" || res.Truncated {
		t.Errorf("Read(/r.txt) = %+v, want lines one two three, total 3, path r.txt", res)
	}
	w.write("noeol.txt", "one\ntwo")
	wantLines(t, w, "noeol.txt", "one", "two")
	w.write("crlf.txt", "a\r\nb\r\n")
	wantLines(t, w, "crlf.txt", "a", "b")
	w.write("blank.txt", "\n\nx\n")
	wantLines(t, w, "blank.txt", "", "", "x")
	w.write("empty.txt", "")
	res, err = w.FS().Read(t.Context(), backend.ReadRequest{Path: "empty.txt"})
	if err != nil || len(res.Lines) != 0 || res.TotalLines != 0 {
		t.Errorf("Read of an empty file = %+v, %v; want no lines", res, err)
	}
}

func checkReadOffsetLimit(t *T, w *ws) {
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "line%d\n", i)
	}
	w.write("ten.txt", b.String())
	for _, c := range []struct {
		off, lim int
		want     []string
	}{
		{3, 4, []string{"line4", "line5", "line6", "line7"}},
		{8, 5, []string{"line9", "line10"}},
		{0, 1, []string{"line1"}},
		{10, 0, nil},
		{50, 3, nil},
	} {
		res, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: "ten.txt", Offset: c.off, Limit: c.lim})
		if err != nil {
			t.Errorf("Read offset %d limit %d: %v", c.off, c.lim, err)
			continue
		}
		if !slices.Equal(res.Lines, c.want) || res.TotalLines != 10 || res.Offset != c.off {
			t.Errorf("Read offset %d limit %d = lines %q total %d offset %d; want %q, total 10", c.off, c.lim, res.Lines, res.TotalLines, res.Offset, c.want)
		}
	}
}

func checkReadLimitBounds(t *T, w *ws) {
	w.write("seven.txt", "1\n2\n3\n4\n5\n6\n7\n")
	for _, req := range []backend.ReadRequest{
		{Path: "seven.txt", Limit: w.limits.MaxResults + 1},
		{Path: "seven.txt", Limit: -1},
		{Path: "seven.txt", Offset: -1},
	} {
		_, err := w.FS().Read(t.Context(), req)
		wantKind(t, fmt.Sprintf("Read offset %d limit %d", req.Offset, req.Limit), err, backend.ErrInvalid)
	}
	res, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: "seven.txt"})
	if err != nil || !slices.Equal(res.Lines, []string{"1", "2", "3", "4", "5"}) || res.TotalLines != 7 {
		t.Errorf("Read with limit 0 at MaxResults 5 = %+v, %v; want the first 5 lines of 7", res, err)
	}
}

func checkReadByteCap(t *T, w *ws) {
	w.write("long.txt", strings.Repeat("x", 40)+"\n"+strings.Repeat("y", 1000)+"\nshort\n")
	res, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: "long.txt"})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	n := 0
	for _, l := range res.Lines {
		n += len(l)
	}
	if !res.Truncated || n > w.limits.MaxReadBytes {
		t.Errorf("Read of a 1000-byte line at MaxReadBytes %d: %d bytes returned, truncated %v", w.limits.MaxReadBytes, n, res.Truncated)
	}
	if len(res.Lines) == 0 || res.Lines[0] != strings.Repeat("x", 40) {
		t.Errorf("Read under the byte cap lost the first line: %q", res.Lines)
	}
}

func checkReadErrors(t *T, w *ws) {
	w.write("d/f.txt", "x")
	_, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: "d"})
	wantKind(t, "Read of a directory", err, backend.ErrInvalid)
	_, err = w.FS().Read(t.Context(), backend.ReadRequest{Path: "missing.txt"})
	wantKind(t, "Read of a missing file", err, backend.ErrNotFound)
}

func checkWriteCreate(t *T, w *ws) {
	content := "héllo\nworld"
	res, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "/new/deeper/n.txt", Content: content, Mode: backend.WriteCreate})
	if err != nil {
		t.Fatalf("Write create: %v", err)
	}
	if !res.Created || res.Bytes != len(content) || res.Path != "new/deeper/n.txt" {
		t.Errorf("Write create = %+v, want created, %d bytes, path new/deeper/n.txt", res, len(content))
	}
	wantLines(t, w, "new/deeper/n.txt", "héllo", "world")
	if fi := stat(t, w, "new/deeper/n.txt"); fi.Size != int64(len(content)) {
		t.Errorf("written file has size %d, want %d: content must be written verbatim", fi.Size, len(content))
	}
	if fi := stat(t, w, "new/deeper"); fi.Kind != backend.KindDir {
		t.Errorf("parent of the written file is %s, want a directory", fi.Kind)
	}
	res, err = w.FS().Write(t.Context(), backend.WriteRequest{Path: "default-mode.txt", Content: "x"})
	if err != nil || !res.Created {
		t.Errorf("Write with no mode (create) = %+v, %v", res, err)
	}
}

func checkWriteCreateExisting(t *T, w *ws) {
	w.write("e.txt", "original")
	for _, mode := range []backend.WriteMode{"", backend.WriteCreate} {
		_, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "e.txt", Content: "new", Mode: mode})
		wantKind(t, fmt.Sprintf("Write mode %q over an existing file", mode), err, backend.ErrExist)
	}
	wantLines(t, w, "e.txt", "original")
}

func checkWriteOverwrite(t *T, w *ws) {
	w.write("o.txt", "original content")
	res, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "o.txt", Content: "new", Mode: backend.WriteOverwrite})
	if err != nil || res.Created || res.Bytes != 3 {
		t.Errorf("Write overwrite of an existing file = %+v, %v; want not created, 3 bytes", res, err)
	}
	wantLines(t, w, "o.txt", "new")
	if fi := stat(t, w, "o.txt"); fi.Size != 3 {
		t.Errorf("overwritten file has size %d, want 3 (old content left behind)", fi.Size)
	}
	res, err = w.FS().Write(t.Context(), backend.WriteRequest{Path: "fresh.txt", Content: "f", Mode: backend.WriteOverwrite})
	if err != nil || !res.Created {
		t.Errorf("Write overwrite of a new file = %+v, %v; want created", res, err)
	}
}

func checkWriteAppend(t *T, w *ws) {
	w.write("a.txt", "a\n")
	res, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "a.txt", Content: "b\n", Mode: backend.WriteAppend})
	if err != nil || res.Created || res.Bytes != 2 {
		t.Errorf("Write append = %+v, %v; want not created, 2 bytes", res, err)
	}
	wantLines(t, w, "a.txt", "a", "b")
	res, err = w.FS().Write(t.Context(), backend.WriteRequest{Path: "n/a.txt", Content: "c", Mode: backend.WriteAppend})
	if err != nil || !res.Created {
		t.Errorf("Write append to a new file = %+v, %v; want created", res, err)
	}
	wantLines(t, w, "n/a.txt", "c")
}

func checkWriteMaxChars(t *T, w *ws) {
	n := w.limits.MaxWriteChars
	ok := strings.Repeat("é", n)
	res, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "ok.txt", Content: ok})
	if err != nil || res.Bytes != len(ok) {
		t.Errorf("Write of %d two-byte characters at MaxWriteChars %d = %+v, %v; the limit counts characters", n, n, res, err)
	}
	for _, mode := range []backend.WriteMode{backend.WriteCreate, backend.WriteOverwrite, backend.WriteAppend} {
		_, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "big.txt", Content: strings.Repeat("x", n+1), Mode: mode})
		wantKind(t, fmt.Sprintf("Write %s of %d characters", mode, n+1), err, backend.ErrInvalid)
	}
	if w.exists("big.txt") {
		t.Errorf("a refused write created its file")
	}
}

func checkWriteErrors(t *T, w *ws) {
	w.write("d/f.txt", "keep")
	_, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "x.txt", Content: "x", Mode: "truncate"})
	wantKind(t, "Write with mode truncate", err, backend.ErrInvalid)
	for _, p := range []string{"", ".", "/"} {
		_, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: p, Content: "x", Mode: backend.WriteOverwrite})
		wantKind(t, fmt.Sprintf("Write to the root %q", p), err, backend.ErrInvalid)
	}
	for _, mode := range []backend.WriteMode{backend.WriteOverwrite, backend.WriteAppend} {
		_, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "d", Content: "x", Mode: mode})
		wantKind(t, fmt.Sprintf("Write %s to a directory", mode), err, backend.ErrInvalid)
	}
	_, err = w.FS().Write(t.Context(), backend.WriteRequest{Path: "d", Content: "x", Mode: backend.WriteCreate})
	if k := backend.KindOf(err); k != backend.ErrExist && k != backend.ErrInvalid {
		t.Errorf("Write create to a directory: error %v of kind %v, want ErrExist or ErrInvalid", err, k)
	}
	_, err = w.FS().Write(t.Context(), backend.WriteRequest{Path: "d/f.txt/child", Content: "x", Mode: backend.WriteOverwrite})
	if err == nil || backend.KindOf(err) == nil {
		t.Errorf("Write below a file: error %v, want one of the backend error kinds", err)
	}
	wantLines(t, w, "d/f.txt", "keep")
}

func checkEditUnique(t *T, w *ws) {
	w.write("e.txt", "hello world\nbye world\n")
	res, err := w.FS().Edit(t.Context(), backend.EditRequest{Path: "/e.txt", Old: "hello", New: "HI"})
	if err != nil || res.Replacements != 1 || res.Path != "e.txt" {
		t.Fatalf("Edit of a unique string = %+v, %v; want 1 replacement in e.txt", res, err)
	}
	wantLines(t, w, "e.txt", "HI world", "bye world")
	if _, err := w.FS().Edit(t.Context(), backend.EditRequest{Path: "e.txt", Old: "world\nbye", New: "there\nsee you"}); err != nil {
		t.Fatalf("Edit across lines: %v", err)
	}
	wantLines(t, w, "e.txt", "HI there", "see you world")
}

func checkEditAmbiguous(t *T, w *ws) {
	w.write("e.txt", "hello world\nbye world\n")
	_, err := w.FS().Edit(t.Context(), backend.EditRequest{Path: "e.txt", Old: "world", New: "X"})
	wantKind(t, "Edit of a string occurring twice without replace-all", err, backend.ErrInvalid)
	wantLines(t, w, "e.txt", "hello world", "bye world")
}

func checkEditReplaceAll(t *T, w *ws) {
	w.write("e.txt", "hello world\nbye world\n")
	res, err := w.FS().Edit(t.Context(), backend.EditRequest{Path: "e.txt", Old: "world", New: "there", ReplaceAll: true})
	if err != nil || res.Replacements != 2 {
		t.Fatalf("Edit replace-all = %+v, %v; want 2 replacements", res, err)
	}
	wantLines(t, w, "e.txt", "hello there", "bye there")
}

func checkEditErrors(t *T, w *ws) {
	w.write("d/e.txt", "abc abc")
	ctx := t.Context()
	for _, c := range []struct {
		name string
		req  backend.EditRequest
		kind error
	}{
		{"string not found", backend.EditRequest{Path: "d/e.txt", Old: "zzz", New: "y"}, backend.ErrInvalid},
		{"string not found, replace-all", backend.EditRequest{Path: "d/e.txt", Old: "zzz", New: "y", ReplaceAll: true}, backend.ErrInvalid},
		{"empty old string", backend.EditRequest{Path: "d/e.txt", Old: "", New: "y"}, backend.ErrInvalid},
		{"replacement over MaxWriteChars", backend.EditRequest{Path: "d/e.txt", Old: "abc", New: strings.Repeat("y", w.limits.MaxWriteChars+1), ReplaceAll: true}, backend.ErrInvalid},
		{"missing file", backend.EditRequest{Path: "d/missing.txt", Old: "a", New: "b"}, backend.ErrNotFound},
		{"directory", backend.EditRequest{Path: "d", Old: "a", New: "b"}, backend.ErrInvalid},
	} {
		_, err := w.FS().Edit(ctx, c.req)
		wantKind(t, "Edit: "+c.name, err, c.kind)
	}
	wantLines(t, w, "d/e.txt", "abc abc")
}

func checkFSCancelled(t *T, w *ws) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := w.FS().Write(ctx, backend.WriteRequest{Path: "c.txt", Content: "x"})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a cancelled context: error %v, want one wrapping context.Canceled", err)
	}
	if w.exists("c.txt") {
		t.Errorf("Write with a cancelled context wrote its file")
	}
}
