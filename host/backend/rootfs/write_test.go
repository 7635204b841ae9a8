//go:build linux && (amd64 || arm64)

package rootfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

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
	backendtest.WantKind(t, err, backend.ErrExist, "file already exists: use edit")
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
	backendtest.WantKind(t, err, backend.ErrNotFound, "")
	if fi, err := os.Lstat(filepath.Join(w.root, "dirlink")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the dangling symlink was replaced: %v", err)
	}
	w.symlink(t, "loop2", "loop1")
	w.symlink(t, "loop1", "loop2")
	_, err = write("loop1", "x", backend.WriteOverwrite)
	backendtest.WantKind(t, err, backend.ErrInvalid, "symbolic links")

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
		backendtest.WantKind(t, err, backend.ErrInvalid, msg)
	}
	_, err = write("f", "x", "truncate")
	backendtest.WantKind(t, err, backend.ErrInvalid, "write mode")
	small := newWorld(t, Options{Limits: limits(func(l *backend.Limits) { l.MaxWriteChars = 4 })})
	_, err = small.fs.Write(ctx, backend.WriteRequest{Path: "f", Content: "ééééé"})
	backendtest.WantKind(t, err, backend.ErrInvalid, "5 characters, over the limit of 4")
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
	backendtest.WantKind(t, err, backend.ErrInvalid, "old string occurs 2 times: make it unique or set replace_all")
	_, err = edit("f.go", "zzz", "y", false)
	backendtest.WantKind(t, err, backend.ErrInvalid, "old string not found")
	_, err = edit("f.go", "", "y", false)
	backendtest.WantKind(t, err, backend.ErrInvalid, "old string is empty")
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
	backendtest.WantKind(t, err, backend.ErrNotFound, "write it first")
	_, err = edit(".", "a", "b", false)
	backendtest.WantKind(t, err, backend.ErrInvalid, "is a directory")

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
	backendtest.WantKind(t, err, backend.ErrInvalid, "over the limit")
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
		backendtest.WantKind(t, err, backend.ErrInvalid, "refusing to remove the workspace root")
	}
	_, err := remove("../root", true)
	backendtest.WantKind(t, err, backend.ErrInvalid, "climbs above")
	_, err = remove("missing", false)
	backendtest.WantKind(t, err, backend.ErrNotFound, "")
	_, err = remove("full", false)
	backendtest.WantKind(t, err, backend.ErrInvalid, "set recursive")
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
	backendtest.WantKind(t, err, backend.ErrInvalid, "deeper than")
}
