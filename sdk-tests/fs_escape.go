package sdktests

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// notHostPasswd fails the check if a read through path returned the host's
// /etc/passwd. Refusing the read (any backend error kind) is fine.
func notHostPasswd(t *T, w *ws, path string) {
	t.Helper()
	res, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: path})
	if err != nil {
		if backend.KindOf(err) == nil {
			t.Errorf("Read(%s): error %v of no backend kind", path, err)
		}
		return
	}
	got := strings.Join(res.Lines, "\n")
	if pw := strings.TrimRight(realPasswd(), "\n"); pw != "" && got == pw || strings.HasPrefix(got, "root:x:0:0:") {
		t.Errorf("Read(%s) ESCAPED the workspace: it returned the host's /etc/passwd", path)
	}
}

// escapeName is a file name no other test on the machine uses.
func escapeName() string { return "wai-sdk-escape-" + sleepMarker()[3:] + ".txt" }

// landedInside fails the check unless a write to path was refused as
// invalid or landed inside the root at inside; it also checks the host
// places the write would reach if it escaped.
func landedInside(t *T, w *ws, path, inside string, outside ...string) {
	t.Helper()
	_, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: path, Content: "escaped?", Mode: backend.WriteCreate})
	if err != nil && !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("Write(%s): error %v of kind %v, want ErrInvalid or a write inside the root", path, err, backend.KindOf(err))
	}
	if err == nil && !w.exists(inside) {
		t.Errorf("Write(%s) succeeded but %s does not exist inside the root", path, inside)
	}
	for _, o := range outside {
		if _, err := os.Lstat(o); err == nil {
			_ = os.Remove(o)
			t.Errorf("Write(%s) ESCAPED the workspace: it created %s", path, o)
		}
	}
}

func checkDotDot(t *T, w *ws) {
	name := escapeName()
	var outside []string
	if h := w.hostDir(); h != "" {
		outside = append(outside, filepath.Join(filepath.Dir(h), name))
	}
	landedInside(t, w, "../"+name, name, outside...)
	name = escapeName()
	landedInside(t, w, "../../../../../../../../tmp/"+name, "tmp/"+name, filepath.Join(os.TempDir(), name), "/tmp/"+name)
	notHostPasswd(t, w, "../../../../../../../../etc/passwd")
	w.write("in.txt", "x")
	res, err := w.FS().List(t.Context(), "..")
	if err != nil && !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("List(..): error %v, want ErrInvalid or the root", err)
	}
	if err == nil && (len(res.Entries) == 0 || res.Entries[0].Path != "in.txt") {
		t.Errorf("List(..) = %+v, want the root's entries", res.Entries)
	}
}

func checkAbsoluteInside(t *T, w *ws) {
	notHostPasswd(t, w, "/etc/passwd")
	w.write("etc/passwd", "inside\n")
	if got := lines(t, w, "/etc/passwd"); len(got) != 1 || got[0] != "inside" {
		t.Errorf("Read(/etc/passwd) = %q, want the workspace's etc/passwd", got)
	}
	if fi := stat(t, w, "/etc/passwd"); fi.Path != "etc/passwd" || fi.Size != 7 {
		t.Errorf("Stat(/etc/passwd) = %+v, want the workspace's 7-byte etc/passwd", fi)
	}
	if names := listNames(t, w, "/etc"); len(names) != 1 || names[0] != "passwd" {
		t.Errorf("List(/etc) = %q, want the workspace's etc", names)
	}
}

func checkSearchInside(t *T, w *ws) {
	w.write("in.txt", "root: inside\n")
	ctx := t.Context()
	bad := func(p string) bool { return strings.HasPrefix(p, "..") || strings.HasPrefix(p, "/") }
	for _, req := range []backend.GlobRequest{{Pattern: "../*"}, {Pattern: "*", Path: ".."}, {Pattern: "../../etc/*"}, {Pattern: "*", Path: "/../etc"}} {
		res, err := w.FS().Glob(ctx, req)
		if err != nil && backend.KindOf(err) == nil {
			t.Errorf("Glob(%+v): error %v of no backend kind", req, err)
		}
		for _, p := range res.Paths {
			if bad(p) {
				t.Errorf("Glob(%+v) ESCAPED the workspace: %s", req, p)
			}
		}
	}
	for _, req := range []backend.GrepRequest{{Pattern: "root", Path: ".."}, {Pattern: "root", Path: "../../../etc"}, {Pattern: "root", Path: "/../etc/passwd"}} {
		res, err := w.FS().Grep(ctx, req)
		if err != nil && backend.KindOf(err) == nil {
			t.Errorf("Grep(%+v): error %v of no backend kind", req, err)
		}
		for _, m := range res.Matches {
			if bad(m.Path) || m.Path != "in.txt" {
				t.Errorf("Grep(%+v) ESCAPED the workspace: %s:%d:%s", req, m.Path, m.Line, m.Text)
			}
		}
	}
}

func checkSymlinkInside(t *T, w *ws) {
	w.write("target.txt", "T\n")
	w.write("dir/inner.txt", "I\n")
	w.symlink("target.txt", "rel")
	w.symlink("/target.txt", "abs")
	w.symlink("dir", "dirlink")
	w.symlink("/dir", "dirabs")
	wantLines(t, w, "rel", "T")
	wantLines(t, w, "abs", "T")
	wantLines(t, w, "dirlink/inner.txt", "I")
	wantLines(t, w, "dirabs/inner.txt", "I")
	if fi := stat(t, w, "abs"); fi.Kind != backend.KindFile {
		t.Errorf("Stat(abs) = %+v, want it to follow the link to a file", fi)
	}
	res, err := w.FS().List(t.Context(), "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, e := range res.Entries {
		if (e.Name == "rel" || e.Name == "abs" || e.Name == "dirlink") && e.Kind != backend.KindSymlink {
			t.Errorf("List reports %s as %s, want symlink", e.Name, e.Kind)
		}
	}
}

func checkSymlinkPasswd(t *T, w *ws) {
	w.write("sub/x.txt", "x")
	w.symlink("/etc/passwd", "p-abs")
	w.symlink("../../../../../../../../etc/passwd", "p-rel")
	w.symlink("../../../../../../../etc/passwd", "sub/p-rel2")
	w.symlink("/etc", "etc-abs")
	for _, p := range []string{"p-abs", "p-rel", "sub/p-rel2", "etc-abs/passwd"} {
		notHostPasswd(t, w, p)
	}
	res, err := w.FS().Grep(t.Context(), backend.GrepRequest{Pattern: "^root:"})
	if err != nil {
		t.Errorf("Grep over a root holding symlinks: %v", err)
	}
	if len(res.Matches) > 0 {
		t.Errorf("Grep ESCAPED the workspace through a symlink: %+v", res.Matches[0])
	}
}

func checkSymlinkOutside(t *T, w *ws) {
	h := w.hostDir()
	out := t.TempDir()
	secret := filepath.Join(out, "outside.txt")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o644); err != nil {
		t.Fatalf("writing the outside file: %v", err)
	}
	rel, err := filepath.Rel(h, secret)
	if err != nil {
		t.Fatalf("relative path to the outside file: %v", err)
	}
	relDir, _ := filepath.Rel(h, out)
	w.symlink(secret, "o-abs")
	w.symlink(rel, "o-rel")
	w.symlink(out, "o-dir")
	w.symlink(relDir, "o-reldir")
	for _, p := range []string{"o-abs", "o-rel", "o-dir/outside.txt", "o-reldir/outside.txt"} {
		if res, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: p}); err == nil && strings.Join(res.Lines, "") == "secret" {
			t.Errorf("Read(%s) ESCAPED the workspace: it returned %s", p, secret)
		}
		_, _ = w.FS().Write(t.Context(), backend.WriteRequest{Path: p, Content: "pwned", Mode: backend.WriteOverwrite})
		_, _ = w.FS().Write(t.Context(), backend.WriteRequest{Path: p, Content: "pwned", Mode: backend.WriteAppend})
		_, _ = w.FS().Edit(t.Context(), backend.EditRequest{Path: p, Old: "secret", New: "pwned"})
	}
	_, _ = w.FS().Write(t.Context(), backend.WriteRequest{Path: "o-dir/new.txt", Content: "pwned"})
	_, _ = w.FS().Write(t.Context(), backend.WriteRequest{Path: "o-reldir/new.txt", Content: "pwned"})
	for _, p := range []string{"o-dir", "o-reldir", "o-abs", "o-rel", "o-dir/outside.txt"} {
		_, _ = w.FS().Remove(t.Context(), backend.RemoveRequest{Path: p, Recursive: true})
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "secret\n" {
		t.Errorf("operations through symlinks ESCAPED the workspace: the outside file now reads %q (%v)", b, err)
	}
	if _, err := os.Stat(filepath.Join(out, "new.txt")); err == nil {
		t.Errorf("Write through a directory symlink ESCAPED the workspace: it created %s", filepath.Join(out, "new.txt"))
	}
}

func checkDirSymlinkUp(t *T, w *ws) {
	w.write("sub/x.txt", "needle\n")
	w.symlink("..", "up")
	w.symlink("../..", "sub/up2")
	w.symlink("/", "top")
	rootNames := listNames(t, w, "")
	for _, p := range []string{"up", "sub/up2", "top", "up/up"} {
		res, err := w.FS().List(t.Context(), p)
		if err != nil {
			if backend.KindOf(err) == nil {
				t.Errorf("List(%s): error %v of no backend kind", p, err)
			}
			continue
		}
		if len(res.Entries) != len(rootNames) {
			t.Errorf("List(%s) through a symlink pointing up has %d entries, want the root's %d (or an error)", p, len(res.Entries), len(rootNames))
		}
	}
	var outside []string
	name := escapeName()
	if h := w.hostDir(); h != "" {
		outside = append(outside, filepath.Join(filepath.Dir(h), name), filepath.Join(filepath.Dir(filepath.Dir(h)), name))
	}
	landedInside(t, w, "up/"+name, name, outside...)
	name = escapeName()
	landedInside(t, w, "sub/up2/"+name, name, outside...)
	// Walking a tree with a cycle must end.
	start := time.Now()
	g, err := w.FS().Glob(t.Context(), backend.GlobRequest{Pattern: "**"})
	if err != nil || len(g.Paths) > 20 {
		t.Errorf("Glob(**) over a tree with a symlink cycle: %d paths, %v", len(g.Paths), err)
	}
	gr, err := w.FS().Grep(t.Context(), backend.GrepRequest{Pattern: "needle"})
	if err != nil || len(gr.Matches) > 10 {
		t.Errorf("Grep over a tree with a symlink cycle: %d matches, %v", len(gr.Matches), err)
	}
	t.Logf("glob and grep over a symlink cycle took %s", time.Since(start))
}

// fast runs op and fails the check if it takes more than five seconds,
// leaving it behind; unblock is called then to free what op waits on.
func fast(t *T, what string, op func() error, unblock func()) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- op() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Errorf("%s HANGS: no answer after 5 s", what)
		if unblock != nil {
			unblock()
		}
		return errors.New("hung")
	}
}

// unblockFIFO opens a FIFO from the other end, freeing a reader or a
// writer stuck in open(2).
func unblockFIFO(path string) func() {
	return func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
		if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
	}
}

func checkFIFO(t *T, w *ws) {
	w.write("plain.txt", "x\n")
	w.mkfifo("pipe")
	w.symlink("pipe", "pipelink")
	var unblock func()
	if h := w.hostDir(); h != "" {
		unblock = unblockFIFO(filepath.Join(h, "pipe"))
	}
	ctx, fs := t.Context(), w.FS()
	for _, p := range []string{"pipe", "pipelink"} {
		err := fast(t, "Read("+p+")", func() error { _, err := fs.Read(ctx, backend.ReadRequest{Path: p}); return err }, unblock)
		wantKind(t, "Read of a FIFO ("+p+")", err, backend.ErrInvalid)
		for _, mode := range []backend.WriteMode{backend.WriteOverwrite, backend.WriteAppend} {
			err = fast(t, "Write "+string(mode)+" "+p, func() error {
				_, err := fs.Write(ctx, backend.WriteRequest{Path: p, Content: "x", Mode: mode})
				return err
			}, unblock)
			wantKind(t, "Write "+string(mode)+" to a FIFO ("+p+")", err, backend.ErrInvalid)
		}
		err = fast(t, "Edit("+p+")", func() error { _, err := fs.Edit(ctx, backend.EditRequest{Path: p, Old: "x", New: "y"}); return err }, unblock)
		wantKind(t, "Edit of a FIFO ("+p+")", err, backend.ErrInvalid)
	}
	err := fast(t, "Grep over a root holding a FIFO", func() error {
		res, err := fs.Grep(ctx, backend.GrepRequest{Pattern: "x"})
		if err == nil && (len(res.Matches) != 1 || res.Matches[0].Path != "plain.txt") {
			t.Errorf("Grep over a root holding a FIFO = %+v, want the one match in plain.txt", res.Matches)
		}
		return err
	}, unblock)
	if err != nil {
		t.Errorf("Grep over a root holding a FIFO: %v", err)
	}
	err = fast(t, "Glob over a root holding a FIFO", func() error { _, err := fs.Glob(ctx, backend.GlobRequest{Pattern: "**"}); return err }, unblock)
	if err != nil {
		t.Errorf("Glob over a root holding a FIFO: %v", err)
	}
	if fi, err := fs.Stat(ctx, "pipe"); err != nil || fi.Kind != backend.KindOther {
		t.Errorf("Stat of a FIFO = %+v, %v; want kind other", fi, err)
	}
	if res, err := fs.Remove(ctx, backend.RemoveRequest{Path: "pipe"}); err != nil || res.Removed != 1 {
		t.Errorf("Remove of a FIFO = %+v, %v; want it removed", res, err)
	}
}

func checkDeviceSymlink(t *T, w *ws) {
	w.symlink("/dev/zero", "zero")
	w.symlink("/dev/urandom", "urandom")
	w.symlink("/dev/null", "null")
	ctx, fs := t.Context(), w.FS()
	for _, p := range []string{"zero", "urandom", "null"} {
		err := fast(t, "Read("+p+")", func() error {
			res, err := fs.Read(ctx, backend.ReadRequest{Path: p})
			if err == nil && res.TotalLines > 0 {
				t.Errorf("Read(%s) ESCAPED the workspace: it read the host device (%d lines)", p, res.TotalLines)
			}
			return err
		}, nil)
		if err != nil && backend.KindOf(err) == nil {
			t.Errorf("Read(%s): error %v of no backend kind", p, err)
		}
		err = fast(t, "Grep("+p+")", func() error { _, err := fs.Grep(ctx, backend.GrepRequest{Pattern: "x", Path: p}); return err }, nil)
		if err != nil && backend.KindOf(err) == nil {
			t.Errorf("Grep(%s): error %v of no backend kind", p, err)
		}
	}
}

// realPasswd is the host's /etc/passwd, which no workspace read may return.
func realPasswd() string {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return ""
	}
	return string(b)
}
