//go:build linux && (amd64 || arm64)

package rootfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

func globTree(t *testing.T, opts Options) *world {
	w := newWorld(t, opts)
	for _, p := range []string{
		"a.txt", "a/b.txt", "a/b/c.txt", "a/b/c.go", "a.go", "src/main.go", "src/pkg/x.go",
		"src/pkg/x_test.go", ".hidden/h.go", "a-b/z.txt",
	} {
		w.file(t, p, "package x\n")
	}
	if err := os.Mkdir(filepath.Join(w.root, "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.symlink(t, "/", "loop")          // never followed by a walk
	w.symlink(t, "a.go", "link.go")    // a symlink is not a file to glob
	w.symlink(t, w.outside, "outside") // nor a way out
	return w
}

func TestGlob(t *testing.T) {
	w := globTree(t, Options{})
	for _, c := range []struct {
		pattern, path string
		want          []string
	}{
		{"*.go", "", []string{"a.go"}},
		{"**/*.go", "", []string{".hidden/h.go", "a.go", "a/b/c.go", "src/main.go", "src/pkg/x.go", "src/pkg/x_test.go"}},
		{"**", "", []string{".hidden/h.go", "a-b/z.txt", "a.go", "a.txt", "a/b.txt", "a/b/c.go", "a/b/c.txt", "src/main.go", "src/pkg/x.go", "src/pkg/x_test.go"}},
		{"/src/**/*_test.go", "/", []string{"src/pkg/x_test.go"}},
		{"src/**", "", []string{"src/main.go", "src/pkg/x.go", "src/pkg/x_test.go"}},
		{"**/**/b/**/*.txt", "", []string{"a/b/c.txt"}},
		{"a/*/c.*", "", []string{"a/b/c.go", "a/b/c.txt"}},
		{"*.go", "src/pkg", []string{"src/pkg/x.go", "src/pkg/x_test.go"}},
		{"*", "a", []string{"a/b.txt"}},
		{"[ab].txt", "", []string{"a.txt"}},
		{"./a/./b.txt", "", []string{"a/b.txt"}},
		{"nothing*", "", []string{}},
	} {
		res, err := w.fs.Glob(ctx, backend.GlobRequest{Pattern: c.pattern, Path: c.path})
		if err != nil {
			t.Fatalf("Glob(%q, %q): %v", c.pattern, c.path, err)
		}
		if !reflect.DeepEqual(res.Paths, c.want) || res.Truncated {
			t.Errorf("Glob(%q, %q) = %q, want %q", c.pattern, c.path, res.Paths, c.want)
		}
		if !sort.StringsAreSorted(res.Paths) {
			t.Errorf("Glob(%q) not sorted: %q", c.pattern, res.Paths)
		}
	}
	for _, c := range []struct{ pattern, path, msg string }{
		{"[", "", "invalid glob pattern"},
		{"", "", "empty glob pattern"},
		{"/", "", "empty glob pattern"},
		{"../*", "", "may not contain .."},
		{"*", "a.txt", "read it instead"},
		{"*", "../x", "climbs above"},
	} {
		_, err := w.fs.Glob(ctx, backend.GlobRequest{Pattern: c.pattern, Path: c.path})
		backendtest.WantKind(t, err, backend.ErrInvalid, c.msg)
	}
	_, err := w.fs.Glob(ctx, backend.GlobRequest{Pattern: "*", Path: "missing"})
	backendtest.WantKind(t, err, backend.ErrNotFound, "")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.fs.Glob(cancelled, backend.GlobRequest{Pattern: "**"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Glob with a cancelled context: %v", err)
	}
}

// A capped glob returns the first N paths of the sorted whole, which the
// walk order guarantees even where "a.txt" sorts before "a/b".
func TestGlobCap(t *testing.T) {
	all := []string{".hidden/h.go", "a-b/z.txt", "a.go", "a.txt", "a/b.txt", "a/b/c.go", "a/b/c.txt", "src/main.go", "src/pkg/x.go", "src/pkg/x_test.go"}
	for n := 1; n < len(all); n++ {
		w := globTree(t, Options{Limits: limits(func(l *backend.Limits) { l.MaxResults = n })})
		res, err := w.fs.Glob(ctx, backend.GlobRequest{Pattern: "**"})
		if err != nil || !res.Truncated || !reflect.DeepEqual(res.Paths, all[:n]) {
			t.Fatalf("cap %d: %q truncated=%v, %v", n, res.Paths, res.Truncated, err)
		}
	}
	w := globTree(t, Options{Limits: limits(func(l *backend.Limits) { l.MaxResults = len(all) })})
	if res, err := w.fs.Glob(ctx, backend.GlobRequest{Pattern: "**"}); err != nil || res.Truncated || len(res.Paths) != len(all) {
		t.Fatalf("exactly at the cap: %+v, %v", res, err)
	}
}

func TestGrep(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "b.go", "package b\nfunc Needle() {}\n\tneedle := 1\r\n")
	w.file(t, "a.txt", "needle one\nnothing\nneedle two")
	w.file(t, "sub/c.go", "// needle in sub\n")
	w.file(t, "sub/deep/d.txt", "needle deep\n")
	w.file(t, "bin.dat", "needle\x00needle\n")
	w.file(t, "late-nul.txt", strings.Repeat("x", binarySniffBytes)+"\x00needle\n")
	w.file(t, "bad.txt", "needle \xff\n")
	w.symlink(t, "/", "loop")
	w.symlink(t, "a.txt", "link.txt")
	w.symlink(t, w.outside, "outside")

	type m = backend.GrepMatch
	for _, c := range []struct {
		req  backend.GrepRequest
		want []m
	}{
		{backend.GrepRequest{Pattern: "needle"}, []m{
			{Path: "a.txt", Line: 1, Text: "needle one"}, {Path: "a.txt", Line: 3, Text: "needle two"},
			{Path: "b.go", Line: 3, Text: "\tneedle := 1"}, {Path: "bad.txt", Line: 1, Text: "needle \uFFFD"},
			{Path: "late-nul.txt", Line: 1, Text: strings.Repeat("x", maxMatchText)},
			{Path: "sub/c.go", Line: 1, Text: "// needle in sub"}, {Path: "sub/deep/d.txt", Line: 1, Text: "needle deep"},
		}},
		{backend.GrepRequest{Pattern: "(?i)^func needle"}, []m{{Path: "b.go", Line: 2, Text: "func Needle() {}"}}},
		{backend.GrepRequest{Pattern: "needle", Glob: "*.go"}, []m{
			{Path: "b.go", Line: 3, Text: "\tneedle := 1"}, {Path: "sub/c.go", Line: 1, Text: "// needle in sub"},
		}},
		{backend.GrepRequest{Pattern: "needle", Glob: "sub/**/*.txt"}, []m{{Path: "sub/deep/d.txt", Line: 1, Text: "needle deep"}}},
		{backend.GrepRequest{Pattern: "needle", Path: "sub"}, []m{
			{Path: "sub/c.go", Line: 1, Text: "// needle in sub"}, {Path: "sub/deep/d.txt", Line: 1, Text: "needle deep"},
		}},
		{backend.GrepRequest{Pattern: "needle", Path: "sub", Glob: "deep/*"}, []m{{Path: "sub/deep/d.txt", Line: 1, Text: "needle deep"}}},
		{backend.GrepRequest{Pattern: "two", Path: "/a.txt"}, []m{{Path: "a.txt", Line: 3, Text: "needle two"}}},
		{backend.GrepRequest{Pattern: "two", Path: "link.txt"}, []m{{Path: "link.txt", Line: 3, Text: "needle two"}}},
		{backend.GrepRequest{Pattern: "two", Path: "a.txt", Glob: "*.go"}, []m{}},
		{backend.GrepRequest{Pattern: "needle", Path: "bin.dat"}, []m{}},
		{backend.GrepRequest{Pattern: "secret|SECRET"}, []m{}},
	} {
		res, err := w.fs.Grep(ctx, c.req)
		if err != nil {
			t.Fatalf("Grep(%+v): %v", c.req, err)
		}
		if !reflect.DeepEqual(res.Matches, c.want) || res.Truncated {
			t.Errorf("Grep(%+v) =\n%+v\nwant\n%+v", c.req, res.Matches, c.want)
		}
	}
	_, err := w.fs.Grep(ctx, backend.GrepRequest{Pattern: "a(b"})
	backendtest.WantKind(t, err, backend.ErrInvalid, "invalid regular expression")
	_, err = w.fs.Grep(ctx, backend.GrepRequest{Pattern: "x", Glob: "["})
	backendtest.WantKind(t, err, backend.ErrInvalid, "invalid glob")
	_, err = w.fs.Grep(ctx, backend.GrepRequest{Pattern: "x", Path: "missing"})
	backendtest.WantKind(t, err, backend.ErrNotFound, "")
}

func TestGrepCaps(t *testing.T) {
	w := newWorld(t, Options{Limits: limits(func(l *backend.Limits) { l.MaxResults = 5 })})
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "hit %d\n", i)
	}
	w.file(t, "b.txt", b.String())
	w.file(t, "a.txt", "hit a\n")
	res, err := w.fs.Grep(ctx, backend.GrepRequest{Pattern: "hit"})
	if err != nil || !res.Truncated || len(res.Matches) != 5 || res.Matches[0].Path != "a.txt" || res.Matches[4].Text != "hit 4" {
		t.Fatalf("capped grep: %+v, %v", res, err)
	}
	// The text budget caps the answer too.
	w2 := newWorld(t, Options{Limits: limits(func(l *backend.Limits) { l.MaxReadBytes = 12 })})
	w2.file(t, "f", "hit one\nhit two\nhit three\n")
	res, err = w2.fs.Grep(ctx, backend.GrepRequest{Pattern: "hit"})
	if err != nil || !res.Truncated || len(res.Matches) != 2 || res.Matches[1].Text != "hit t" {
		t.Fatalf("grep over the byte budget: %+v, %v", res, err)
	}
}
