//go:build linux && (amd64 || arm64)

package rootfs

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// FuzzPaths throws arbitrary paths at every path-taking operation of a
// workspace seeded with escape attempts, and checks that nothing outside the
// root is ever read, written or resolved, and that every refusal carries an
// error kind.
func FuzzPaths(f *testing.F) {
	for _, p := range []string{
		"", ".", "/", "..", "../outside/secret", "/../outside/secret", "a/../../outside/secret",
		"abs-secret", "rel-secret", "up/outside/secret", "up/up/up", "outdir/secret", "passwd",
		"loop/loop/loop", "dir/./../dir/f", "a//b///c", "dir/f/..", "\x00", "dir/\xff", strings.Repeat("../", 50),
		"dangling", "dangling/x", "self/self/self/f",
	} {
		f.Add(p)
	}
	w := newWorld(f, Options{})
	w.file(f, "dir/f", "inside\n")
	w.symlink(f, filepath.Join(w.outside, "secret"), "abs-secret")
	w.symlink(f, "../outside/secret", "rel-secret")
	w.symlink(f, "../../../../", "up")
	w.symlink(f, w.outside, "outdir")
	w.symlink(f, "/etc/passwd", "passwd")
	w.symlink(f, "/", "loop")
	w.symlink(f, "../nowhere", "dangling")
	w.symlink(f, ".", "dir/self")
	base := filepath.Dir(w.root)
	real, err := filepath.EvalSymlinks(w.root)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		check := func(op string, err error) {
			if err != nil && backend.KindOf(err) == nil {
				t.Fatalf("%s(%q): error without a kind: %v", op, p, err)
			}
		}
		if host, err := w.fs.Resolve(p); err == nil {
			if host != real && !strings.HasPrefix(host, real+"/") {
				t.Fatalf("Resolve(%q) = %s, outside %s", p, host, real)
			}
		} else {
			check("Resolve", err)
		}
		_, err := w.fs.Stat(ctx, p)
		check("Stat", err)
		res, err := w.fs.Read(ctx, backend.ReadRequest{Path: p})
		check("Read", err)
		if strings.Contains(strings.Join(res.Lines, "\n"), "OUTSIDE-SECRET") || strings.Contains(strings.Join(res.Lines, "\n"), "root:x:0") {
			t.Fatalf("Read(%q) reached outside the root: %q", p, res.Lines)
		}
		_, err = w.fs.List(ctx, p)
		check("List", err)
		_, err = w.fs.Write(ctx, backend.WriteRequest{Path: p, Content: "fuzz", Mode: backend.WriteAppend})
		check("Write", err)
		_, err = w.fs.Edit(ctx, backend.EditRequest{Path: p, Old: "SECRET", New: "x"})
		check("Edit", err)
		for _, followLast := range []bool{true, false} {
			r, err := w.fs.ResolvePath(ctx, p, followLast)
			check("ResolvePath", err)
			if err != nil {
				continue
			}
			if r != "." && (r != path.Clean(r) || strings.HasPrefix(r, "/") || r == ".." || strings.HasPrefix(r, "../")) {
				t.Fatalf("ResolvePath(%q, %v) = %q: not a clean root-relative path", p, followLast, r)
			}
			if followLast {
				_, err = w.fs.Write(ctx, backend.WriteRequest{Path: p, Resolved: r, Content: "fuzz", Mode: backend.WriteAppend})
				check("Write(resolved)", err)
			}
		}
		_, err = w.fs.Glob(ctx, backend.GlobRequest{Pattern: "*", Path: p})
		check("Glob", err)
		g, err := w.fs.Grep(ctx, backend.GrepRequest{Pattern: "SECRET|root:x:0", Path: p})
		check("Grep", err)
		if len(g.Matches) > 0 {
			t.Fatalf("Grep(%q) reached outside the root: %+v", p, g.Matches)
		}
		w.untouched(t)
		entries, err := os.ReadDir(base)
		if err != nil || len(entries) != 2 {
			t.Fatalf("something was created next to the root: %v %v", entries, err)
		}
	})
}
