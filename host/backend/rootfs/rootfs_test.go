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
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
	"github.com/wai-dev/wai/internal/filetree"
)

// world is a workspace root next to a directory it must never reach.
type world struct {
	fs      *FS
	root    string // host path of the root
	outside string // host path of a sibling directory holding a secret
}

const secret = "OUTSIDE-SECRET\n"

func newWorld(t testing.TB, opts Options) *world {
	t.Helper()
	base := t.TempDir()
	w := &world{root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{w.root, w.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.outside, "secret"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := New(w.root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fs.Close() })
	w.fs = fs
	return w
}

// file writes a file on the host side, creating parents.
func (w *world) file(t testing.TB, rel, content string) {
	t.Helper()
	filetree.File(t, filepath.Join(w.root, rel), content)
}

func (w *world) symlink(t testing.TB, target, rel string) {
	t.Helper()
	p := filepath.Join(w.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// untouched fails the test if the outside directory changed.
func (w *world) untouched(t testing.TB) {
	t.Helper()
	entries, err := os.ReadDir(w.outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "secret" {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("the outside directory changed: %v", names)
	}
	b, err := os.ReadFile(filepath.Join(w.outside, "secret"))
	if err != nil || string(b) != secret {
		t.Fatalf("the outside secret changed: %q, %v", b, err)
	}
}

// fast runs fn and fails if it takes longer than a second: what must fail
// fast (a FIFO) must not hang the test either.
func fast(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Second):
		t.Fatalf("%s blocked for over a second", what)
		return nil
	}
}

var ctx = context.Background()

func TestNew(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(filepath.Join(dir, "missing"), Options{}); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("missing root: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(filepath.Join(dir, "f"), Options{})
	backendtest.WantKind(t, err, backend.ErrInvalid, "not a directory")
	_, err = New("", Options{})
	backendtest.WantKind(t, err, backend.ErrInvalid, "no root")
	_, err = New(dir, Options{FileMode: os.ModeSetuid | 0o755})
	backendtest.WantKind(t, err, backend.ErrInvalid, "permission bits")
	bad := backend.DefaultLimits()
	bad.MaxResults = 0
	_, err = New(dir, Options{Limits: bad})
	backendtest.WantKind(t, err, backend.ErrInvalid, "max_results")

	// A root reached through a symlink is the directory it points to.
	if err := os.Symlink(dir, filepath.Join(t.TempDir(), "l")); err != nil {
		t.Fatal(err)
	}
	fs, err := New(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if fs.Root() != real {
		t.Fatalf("Root() = %s, want %s", fs.Root(), real)
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fs.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err = fs.Stat(ctx, ".")
	backendtest.WantKind(t, err, backend.ErrUnavailable, "closed")
	_, err = fs.Resolve(".")
	backendtest.WantKind(t, err, backend.ErrUnavailable, "closed")
}

func TestResolve(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "sub/deep/f", "x")
	w.symlink(t, "/sub/deep", "abs")
	w.symlink(t, "../../../..", "up")
	w.symlink(t, w.outside, "out")
	real, _ := filepath.EvalSymlinks(w.root)
	for p, want := range map[string]string{
		"": real, ".": real, "/": real, "sub": real + "/sub", "/sub/deep/": real + "/sub/deep",
		"abs": real + "/sub/deep", "up": real, "up/sub": real + "/sub", "sub/../sub/deep/..": real + "/sub",
	} {
		got, err := w.fs.Resolve(p)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	for p, kind := range map[string]error{
		"..": backend.ErrInvalid, "../root": backend.ErrInvalid, "/../x": backend.ErrInvalid,
		"sub/../../x": backend.ErrInvalid, "sub/deep/f": backend.ErrInvalid, "a\x00b": backend.ErrInvalid,
		"missing": backend.ErrNotFound, "out": backend.ErrNotFound,
	} {
		if _, err := w.fs.Resolve(p); !errors.Is(err, kind) {
			t.Errorf("Resolve(%q): %v, want %v", p, err, kind)
		}
	}
}

// Every way out of the root that a request or a planted symlink could take
// stays inside it.
func TestEscapes(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "inside.txt", "inside\n")
	w.symlink(t, "/etc/passwd", "passwd")                          // absolute, to a real host file
	w.symlink(t, filepath.Join(w.outside, "secret"), "abs-secret") // absolute, to the sibling
	w.symlink(t, "../outside/secret", "rel-secret")                // relative, climbing out
	w.symlink(t, "../../../../../../../../", "up")                 // directory symlink pointing up
	w.symlink(t, "..", "parent")                                   // one level up
	w.symlink(t, w.outside, "outdir")                              // absolute directory outside
	w.symlink(t, "/inside.txt", "abs-inside")                      // absolute, inside
	w.symlink(t, "sub/../../outside/secret", "sub-climb")          // climbing through a directory
	w.file(t, "sub/x", "x")

	t.Run("reads", func(t *testing.T) {
		for _, p := range []string{
			"passwd", "abs-secret", "rel-secret", "up/outside/secret", "parent/outside/secret",
			"outdir/secret", "sub-climb", "/etc/passwd", "up/etc/passwd",
		} {
			res, err := w.fs.Read(ctx, backend.ReadRequest{Path: p})
			if !errors.Is(err, backend.ErrNotFound) {
				t.Errorf("Read(%q) = %q, %v; want not found", p, res.Lines, err)
			}
		}
		for _, p := range []string{"../outside/secret", "/../outside/secret", "sub/../../outside/secret", "..", "../../../etc/passwd"} {
			_, err := w.fs.Read(ctx, backend.ReadRequest{Path: p})
			backendtest.WantKind(t, err, backend.ErrInvalid, "climbs above")
		}
		res, err := w.fs.Read(ctx, backend.ReadRequest{Path: "abs-inside"})
		if err != nil || len(res.Lines) != 1 || res.Lines[0] != "inside" {
			t.Fatalf("absolute symlink inside: %+v, %v", res, err)
		}
		// A directory symlink pointing up lands on the root itself.
		res, err = w.fs.Read(ctx, backend.ReadRequest{Path: "up/up/parent/inside.txt"})
		if err != nil || res.Lines[0] != "inside" {
			t.Fatalf("up/up/parent/inside.txt: %+v, %v", res, err)
		}
		list, err := w.fs.List(ctx, "up")
		if err != nil || len(list.Entries) == 0 || list.Entries[0].Path != "up/abs-inside" {
			t.Fatalf("List(up) should list the root: %+v, %v", list, err)
		}
	})

	t.Run("writes", func(t *testing.T) {
		// A final link meant for the real file system (absolute, or
		// climbing above the root) whose target the root lacks is
		// refused, saying where it leads: following it chroot-style would
		// make a copy inside the root that the shell never sees.
		for _, p := range []string{"abs-secret", "rel-secret", "sub-climb", "outdir/secret"} {
			_, err := w.fs.Write(ctx, backend.WriteRequest{Path: p, Content: "pwned", Mode: backend.WriteOverwrite})
			backendtest.WantKind(t, err, backend.ErrNotFound, "is a symbolic link that")
			w.untouched(t)
		}
		if _, err := os.Lstat(filepath.Join(w.root, strings.Split(w.outside[1:], "/")[0])); !os.IsNotExist(err) {
			t.Errorf("a refused write made directories in the root: %v", err)
		}
		// Directory links climbing above the root clamp to it.
		for _, p := range []string{"up/outside/secret", "parent/outside/new"} {
			if _, err := w.fs.Write(ctx, backend.WriteRequest{Path: p, Content: "pwned", Mode: backend.WriteOverwrite}); err != nil {
				t.Fatalf("Write(%q): %v", p, err)
			}
			w.untouched(t)
		}
		for _, rel := range []string{"outside/secret", "outside/new"} {
			if b, err := os.ReadFile(filepath.Join(w.root, rel)); err != nil || string(b) != "pwned" {
				t.Errorf("%s inside the root: %q, %v", rel, b, err)
			}
		}
		for _, p := range []string{"../escape", "/../escape", "sub/../../escape"} {
			_, err := w.fs.Write(ctx, backend.WriteRequest{Path: p, Content: "x"})
			backendtest.WantKind(t, err, backend.ErrInvalid, "climbs above")
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(w.root), "escape")); !os.IsNotExist(err) {
			t.Fatalf("a file was written next to the root: %v", err)
		}
		if _, err := w.fs.Edit(ctx, backend.EditRequest{Path: "parent/outside/new", Old: "pwned", New: "again"}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.fs.Remove(ctx, backend.RemoveRequest{Path: "parent/outside/new"}); err != nil {
			t.Fatal(err)
		}
		w.untouched(t)
	})

	t.Run("stat and remove never follow out", func(t *testing.T) {
		fi, err := w.fs.Stat(ctx, "up")
		if err != nil || fi.Kind != backend.KindDir {
			t.Fatalf("Stat(up): %+v, %v", fi, err)
		}
		// The writes above made the targets exist inside the root: Stat
		// describes those copies, never the originals.
		fi, err = w.fs.Stat(ctx, "rel-secret")
		if err != nil || fi.Size != int64(len("pwned")) {
			t.Fatalf("Stat(rel-secret) = %+v, %v", fi, err)
		}
		_, err = w.fs.List(ctx, "outdir")
		backendtest.WantKind(t, err, backend.ErrNotFound, "outdir is a symbolic link that leads outside")
		// Removing a symlink removes the link, never its target.
		if _, err := w.fs.Remove(ctx, backend.RemoveRequest{Path: "parent", Recursive: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(w.root, "parent")); !os.IsNotExist(err) {
			t.Fatal("the symlink is still there")
		}
		if _, err := os.Stat(filepath.Join(w.root, "inside.txt")); err != nil {
			t.Fatal("removing a symlink to .. removed its target's content")
		}
		w.untouched(t)
	})
}

// A recursive remove of a directory holding symlinks to outside directories
// removes the links only.
func TestRemoveDoesNotFollow(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "d/a/b/c.txt", "c")
	w.symlink(t, w.outside, "d/out")
	w.symlink(t, "../../outside", "d/a/rel-out")
	w.symlink(t, "/", "d/a/root")
	w.file(t, "keep.txt", "k")
	res, err := w.fs.Remove(ctx, backend.RemoveRequest{Path: "d", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 7 { // d, out, a, rel-out, root, b, c.txt
		t.Fatalf("removed %d entries, want 7", res.Removed)
	}
	w.untouched(t)
	if _, err := os.Stat(filepath.Join(w.root, "keep.txt")); err != nil {
		t.Fatal("a file outside the removed directory is gone")
	}
}

// FIFOs and devices fail fast: nothing blocks, nothing is read or written.
func TestSpecialFiles(t *testing.T) {
	w := newWorld(t, Options{})
	if err := syscall.Mkfifo(filepath.Join(w.root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.symlink(t, "/dev/null", "null") // resolves to <root>/dev/null
	w.symlink(t, "fifo", "fifo-link") // a symlink to the FIFO
	w.file(t, "text.txt", "needle\n")

	for _, p := range []string{"fifo", "fifo-link"} {
		err := fast(t, "Read "+p, func() error { _, err := w.fs.Read(ctx, backend.ReadRequest{Path: p}); return err })
		backendtest.WantKind(t, err, backend.ErrInvalid, "not a regular file")
		for _, mode := range []backend.WriteMode{backend.WriteOverwrite, backend.WriteAppend} {
			err = fast(t, "Write "+p, func() error {
				_, err := w.fs.Write(ctx, backend.WriteRequest{Path: p, Content: "x", Mode: mode})
				return err
			})
			backendtest.WantKind(t, err, backend.ErrInvalid, "not a regular file")
		}
		err = fast(t, "Edit "+p, func() error {
			_, err := w.fs.Edit(ctx, backend.EditRequest{Path: p, Old: "a", New: "b"})
			return err
		})
		backendtest.WantKind(t, err, backend.ErrInvalid, "not a regular file")
		err = fast(t, "Grep "+p, func() error { _, err := w.fs.Grep(ctx, backend.GrepRequest{Pattern: "x", Path: p}); return err })
		backendtest.WantKind(t, err, backend.ErrInvalid, "")
	}
	// With a reader on the other end the open succeeds: the fstat check
	// still refuses to write.
	r, err := os.OpenFile(filepath.Join(w.root, "fifo"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = fast(t, "Write with a reader", func() error {
		_, err := w.fs.Write(ctx, backend.WriteRequest{Path: "fifo", Content: "x", Mode: backend.WriteOverwrite})
		return err
	})
	r.Close()
	backendtest.WantKind(t, err, backend.ErrInvalid, "not a regular file")

	if _, err := w.fs.Write(ctx, backend.WriteRequest{Path: "fifo", Content: "x"}); !errors.Is(err, backend.ErrExist) {
		t.Fatalf("create over a FIFO: %v", err)
	}
	fi, err := w.fs.Stat(ctx, "fifo")
	if err != nil || fi.Kind != backend.KindOther || fi.Mode&os.ModeNamedPipe == 0 {
		t.Fatalf("Stat(fifo) = %+v, %v", fi, err)
	}
	g, err := fast2(t, func() (backend.GrepResult, error) { return w.fs.Grep(ctx, backend.GrepRequest{Pattern: "needle|x"}) })
	if err != nil || len(g.Matches) != 1 || g.Matches[0].Path != "text.txt" {
		t.Fatalf("Grep over a tree with a FIFO: %+v, %v", g, err)
	}
	if _, err := w.fs.Read(ctx, backend.ReadRequest{Path: "null"}); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("a symlink to /dev/null must resolve inside the root: %v", err)
	}

	// A real device node, reached through that symlink. Only root may make
	// one; CI runs as root.
	if err := os.Mkdir(filepath.Join(w.root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(w.root, "dev/null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mknod: %v (CI runs as root)", err)
		}
		t.Skipf("cannot make a device node here: %v", err)
	}
	for _, p := range []string{"null", "dev/null"} {
		_, err := w.fs.Read(ctx, backend.ReadRequest{Path: p})
		backendtest.WantKind(t, err, backend.ErrInvalid, "not a regular file")
		_, err = w.fs.Write(ctx, backend.WriteRequest{Path: p, Content: "x", Mode: backend.WriteOverwrite})
		backendtest.WantKind(t, err, backend.ErrInvalid, "not a regular file")
		fi, err := w.fs.Stat(ctx, p)
		if err != nil || fi.Kind != backend.KindOther || fi.Mode&os.ModeCharDevice == 0 {
			t.Fatalf("Stat(%s) = %+v, %v", p, fi, err)
		}
	}
}

func fast2[T any](t *testing.T, fn func() (T, error)) (T, error) {
	t.Helper()
	var v T
	err := fast(t, "call", func() error {
		var err error
		v, err = fn()
		return err
	})
	return v, err
}
