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
	wantKind(t, err, backend.ErrNotFound, "no such file")
	_, err = w.fs.Stat(ctx, "d/f.txt/x")
	wantKind(t, err, backend.ErrInvalid, "not a directory")
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
	wantKind(t, err, backend.ErrInvalid, "read it instead")
	_, err = w.fs.List(ctx, "d-fifo")
	wantKind(t, err, backend.ErrInvalid, "not a directory")
	_, err = w.fs.List(ctx, "nope")
	wantKind(t, err, backend.ErrNotFound, "")
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
	wantKind(t, err, backend.ErrInvalid, "limit")
	_, err = w.fs.Read(ctx, backend.ReadRequest{Path: "lines.txt", Offset: -1})
	wantKind(t, err, backend.ErrInvalid, "offset")
	_, err = w.fs.Read(ctx, backend.ReadRequest{Path: "."})
	wantKind(t, err, backend.ErrInvalid, "is a directory")
	_, err = w.fs.Read(ctx, backend.ReadRequest{Path: "nope"})
	wantKind(t, err, backend.ErrNotFound, "")
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

func TestWrite(t *testing.T) {
	w := newWorld(t, Options{})
	write := func(p, content string, mode backend.WriteMode) (backend.WriteResult, error) {
		return w.fs.Write(ctx, backend.WriteRequest{Path: p, Content: content, Mode: mode})
	}
	host := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(w.root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	res, err := write("new/deep/f.txt", "héllo", "")
	if err != nil || !res.Created || res.Bytes != 6 || res.Path != "new/deep/f.txt" {
		t.Fatalf("create: %+v, %v", res, err)
	}
	for rel, mode := range map[string]os.FileMode{"new": 0o755 | os.ModeDir, "new/deep": 0o755 | os.ModeDir, "new/deep/f.txt": 0o644} {
		fi, err := os.Stat(filepath.Join(w.root, rel))
		if err != nil || fi.Mode() != mode {
			t.Errorf("%s: mode %v, want %v (%v)", rel, fi.Mode(), mode, err)
		}
	}
	_, err = write("new/deep/f.txt", "again", backend.WriteCreate)
	wantKind(t, err, backend.ErrExist, "file already exists: use edit")
	if res, err = write("/new/deep/f.txt", "bye", backend.WriteOverwrite); err != nil || res.Created {
		t.Fatalf("overwrite: %+v, %v", res, err)
	}
	if got := host("new/deep/f.txt"); got != "bye" {
		t.Fatalf("after overwrite: %q", got)
	}
	if _, err = write("new/deep/f.txt", "+more", backend.WriteAppend); err != nil {
		t.Fatal(err)
	}
	if res, err = write("appended.txt", "first", backend.WriteAppend); err != nil || !res.Created {
		t.Fatalf("append creates: %+v, %v", res, err)
	}
	if got := host("new/deep/f.txt"); got != "bye+more" {
		t.Fatalf("after append: %q", got)
	}
	if res, err = write("empty", "", backend.WriteCreate); err != nil || !res.Created || host("empty") != "" {
		t.Fatalf("empty file: %+v, %v", res, err)
	}

	// Through a symlink, inside the root; through a dangling one, its
	// target is created.
	w.symlink(t, "/new/deep/f.txt", "link")
	w.symlink(t, "made/by/link.txt", "dangling")
	if _, err = write("link", "via link", backend.WriteOverwrite); err != nil || host("new/deep/f.txt") != "via link" {
		t.Fatalf("write through a symlink: %v", err)
	}
	if fi, _ := os.Lstat(filepath.Join(w.root, "link")); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced")
	}
	if _, err = write("dangling", "made", backend.WriteOverwrite); err != nil || host("made/by/link.txt") != "made" {
		t.Fatalf("write through a dangling symlink: %v", err)
	}
	// Missing directories under an existing one; a dangling directory
	// symlink in the way is not replaced by a directory.
	if _, err = write("new/other/x/f", "x", ""); err != nil || host("new/other/x/f") != "x" {
		t.Fatalf("write under an existing directory: %v", err)
	}
	w.symlink(t, "/nowhere/dir", "dirlink")
	_, err = write("dirlink/f", "x", "")
	wantKind(t, err, backend.ErrNotFound, "")
	if fi, err := os.Lstat(filepath.Join(w.root, "dirlink")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the dangling symlink was replaced: %v", err)
	}
	w.symlink(t, "loop2", "loop1")
	w.symlink(t, "loop1", "loop2")
	_, err = write("loop1", "x", backend.WriteOverwrite)
	wantKind(t, err, backend.ErrInvalid, "symbolic links")

	for p, msg := range map[string]string{
		"":                       "root is a directory",
		"/":                      "root is a directory",
		"new":                    "is a directory",
		"new/deep/f.txt/x":       "not a directory",
		"../x":                   "climbs above",
		"nul\x00":                "NUL",
		strings.Repeat("n", 300): "too long",
	} {
		_, err := write(p, "x", backend.WriteOverwrite)
		wantKind(t, err, backend.ErrInvalid, msg)
	}
	_, err = write("f", "x", "truncate")
	wantKind(t, err, backend.ErrInvalid, "write mode")
	small := newWorld(t, Options{Limits: limits(func(l *backend.Limits) { l.MaxWriteChars = 4 })})
	_, err = small.fs.Write(ctx, backend.WriteRequest{Path: "f", Content: "ééééé"})
	wantKind(t, err, backend.ErrInvalid, "5 characters, over the limit of 4")
	if _, err := small.fs.Write(ctx, backend.WriteRequest{Path: "f", Content: "éééé"}); err != nil {
		t.Fatalf("4 characters in 8 bytes are within a 4-character limit: %v", err)
	}
}

// Created files and directories get the configured modes, whatever the
// umask, and the configured owner.
func TestWriteModeAndOwner(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	w := newWorld(t, Options{FileMode: 0o664, DirMode: 0o775, Owner: &Owner{UID: 65534, GID: 65534}})
	_, err := w.fs.Write(ctx, backend.WriteRequest{Path: "d/f", Content: "x"})
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI runs as root: chown must work")
		}
		if errors.Is(err, backend.ErrPermission) {
			t.Skip("only root may chown to 65534")
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	for rel, mode := range map[string]os.FileMode{"d": 0o775 | os.ModeDir, "d/f": 0o664} {
		fi, err := os.Stat(filepath.Join(w.root, rel))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode() != mode || st.Uid != 65534 || st.Gid != 65534 {
			t.Errorf("%s: mode %v owner %d:%d", rel, fi.Mode(), st.Uid, st.Gid)
		}
	}
}

func TestEdit(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "f.go", "a := 1\nb := 1\nc := 2\n")
	if err := os.Chmod(filepath.Join(w.root, "f.go"), 0o600); err != nil {
		t.Fatal(err)
	}
	edit := func(p, old, new string, all bool) (backend.EditResult, error) {
		return w.fs.Edit(ctx, backend.EditRequest{Path: p, Old: old, New: new, ReplaceAll: all})
	}
	host := func() string {
		b, _ := os.ReadFile(filepath.Join(w.root, "f.go"))
		return string(b)
	}
	res, err := edit("f.go", "c := 2", "c := 3", false)
	if err != nil || res.Replacements != 1 || res.Path != "f.go" || host() != "a := 1\nb := 1\nc := 3\n" {
		t.Fatalf("edit: %+v, %v, %q", res, err, host())
	}
	_, err = edit("f.go", ":= 1", ":= 9", false)
	wantKind(t, err, backend.ErrInvalid, "old string occurs 2 times: make it unique or set replace_all")
	_, err = edit("f.go", "zzz", "y", false)
	wantKind(t, err, backend.ErrInvalid, "old string not found")
	_, err = edit("f.go", "", "y", false)
	wantKind(t, err, backend.ErrInvalid, "old string is empty")
	res, err = edit("/f.go", ":= 1", ":= 9", true)
	if err != nil || res.Replacements != 2 || host() != "a := 9\nb := 9\nc := 3\n" {
		t.Fatalf("replace all: %+v, %v, %q", res, err, host())
	}
	fi, _ := os.Stat(filepath.Join(w.root, "f.go"))
	if fi.Mode() != 0o600 {
		t.Fatalf("mode after edit: %v", fi.Mode())
	}
	entries, _ := os.ReadDir(w.root)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	_, err = edit("missing.go", "a", "b", false)
	wantKind(t, err, backend.ErrNotFound, "write it first")
	_, err = edit(".", "a", "b", false)
	wantKind(t, err, backend.ErrInvalid, "is a directory")

	// Editing through a symlink changes the target and keeps the link.
	w.symlink(t, "f.go", "link.go")
	if _, err := edit("link.go", "c := 3", "c := 4", false); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(filepath.Join(w.root, "link.go")); fi.Mode()&os.ModeSymlink == 0 || !strings.Contains(host(), "c := 4") {
		t.Fatal("edit through a symlink replaced the link or missed the target")
	}
	small := newWorld(t, Options{Limits: limits(func(l *backend.Limits) { l.MaxWriteChars = 3 })})
	small.file(t, "f", "abc")
	_, err = small.fs.Edit(ctx, backend.EditRequest{Path: "f", Old: "a", New: "four"})
	wantKind(t, err, backend.ErrInvalid, "over the limit")
}

func TestRemove(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "f", "")
	w.file(t, "full/a/b", "")
	w.file(t, "full/c", "")
	if err := os.Mkdir(filepath.Join(w.root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.symlink(t, "full", "dirlink")
	remove := func(p string, rec bool) (backend.RemoveResult, error) {
		return w.fs.Remove(ctx, backend.RemoveRequest{Path: p, Recursive: rec})
	}
	for _, p := range []string{"", ".", "/", "full/..", "/full/a/../.."} {
		_, err := remove(p, true)
		wantKind(t, err, backend.ErrInvalid, "refusing to remove the workspace root")
	}
	_, err := remove("../root", true)
	wantKind(t, err, backend.ErrInvalid, "climbs above")
	_, err = remove("missing", false)
	wantKind(t, err, backend.ErrNotFound, "")
	_, err = remove("full", false)
	wantKind(t, err, backend.ErrInvalid, "set recursive")
	if res, err := remove("dirlink", false); err != nil || res.Removed != 1 {
		t.Fatalf("remove a symlink to a directory: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(w.root, "full/a/b")); err != nil {
		t.Fatal("removing the symlink touched its target")
	}
	if res, err := remove("f", false); err != nil || res.Removed != 1 {
		t.Fatalf("remove a file: %+v, %v", res, err)
	}
	if res, err := remove("empty", false); err != nil || res.Removed != 1 {
		t.Fatalf("remove an empty dir: %+v, %v", res, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.fs.Remove(cancelled, backend.RemoveRequest{Path: "full", Recursive: true}); !errors.Is(err, context.Canceled) {
		t.Fatalf("remove with a cancelled context: %v", err)
	}
	if res, err := remove("/full", true); err != nil || res.Removed != 4 {
		t.Fatalf("remove recursively: %+v, %v", res, err)
	}
	entries, _ := os.ReadDir(w.root)
	if len(entries) != 0 {
		t.Fatalf("left: %v", entries)
	}
}

// A tree deeper than a walk may go is reported truncated rather than
// followed without end.
func TestDeepTree(t *testing.T) {
	w := newWorld(t, Options{})
	p := strings.Repeat("d/", maxDepth+2) + "f.txt"
	if _, err := w.fs.Write(ctx, backend.WriteRequest{Path: p, Content: "x"}); err != nil {
		t.Fatal(err)
	}
	res, err := w.fs.Glob(ctx, backend.GlobRequest{Pattern: "**/*.txt"})
	if err != nil || len(res.Paths) != 0 || !res.Truncated {
		t.Fatalf("Glob over a too-deep tree: %+v, %v", res, err)
	}
	_, err = w.fs.Remove(ctx, backend.RemoveRequest{Path: "d", Recursive: true})
	wantKind(t, err, backend.ErrInvalid, "deeper than")
}
