package sdktests

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// globTree is the tree the glob checks search: "z.go" is a directory, which
// a glob for *.go must not return.
var globTree = []string{"a.go", "b.txt", "x/c.go", "x/y/d.go", "x/y/e.txt", "z.go/f.txt"}

func plantTree(w *ws, files []string) {
	w.t.Helper()
	for _, f := range files {
		w.write(f, "content of "+f+"\n")
	}
}

func glob(t *T, w *ws, pattern, path string) []string {
	t.Helper()
	res, err := w.FS().Glob(t.Context(), backend.GlobRequest{Pattern: pattern, Path: path})
	if err != nil {
		t.Fatalf("Glob(%q, path %q): %v", pattern, path, err)
	}
	if res.Truncated {
		t.Errorf("Glob(%q, path %q) says truncated with %d results", pattern, path, len(res.Paths))
	}
	return res.Paths
}

func checkGlob(t *T, w *ws) {
	plantTree(w, globTree)
	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{"**/*.go", []string{"a.go", "x/c.go", "x/y/d.go"}},
		{"*.go", []string{"a.go"}},
		{"x/*.go", []string{"x/c.go"}},
		{"x/**", []string{"x/c.go", "x/y/d.go", "x/y/e.txt"}},
		{"**", globTree},
		{"**/y/*", []string{"x/y/d.go", "x/y/e.txt"}},
		{"x/**/*.txt", []string{"x/y/e.txt"}},
		{"?.go", []string{"a.go"}},
		{"[ab].*", []string{"a.go", "b.txt"}},
		{"nomatch*", nil},
	} {
		if got := glob(t, w, c.pattern, ""); !slices.Equal(got, c.want) {
			t.Errorf("Glob(%q) = %q, want %q (files only, sorted, relative to the root)", c.pattern, got, c.want)
		}
	}
}

func checkGlobUnderPath(t *T, w *ws) {
	plantTree(w, globTree)
	for _, c := range []struct {
		pattern, path string
		want          []string
	}{
		{"**/*.go", "x", []string{"x/c.go", "x/y/d.go"}},
		{"*.go", "x", []string{"x/c.go"}},
		{"*.go", "/x/", []string{"x/c.go"}},
		{"*", "x/y", []string{"x/y/d.go", "x/y/e.txt"}},
		{"**/*.go", "/", []string{"a.go", "x/c.go", "x/y/d.go"}},
	} {
		if got := glob(t, w, c.pattern, c.path); !slices.Equal(got, c.want) {
			t.Errorf("Glob(%q, path %q) = %q, want %q", c.pattern, c.path, got, c.want)
		}
	}
}

func checkGlobErrors(t *T, w *ws) {
	plantTree(w, globTree)
	_, err := w.FS().Glob(t.Context(), backend.GlobRequest{Pattern: "["})
	wantKind(t, "Glob with pattern \"[\"", err, backend.ErrInvalid)
	_, err = w.FS().Glob(t.Context(), backend.GlobRequest{Pattern: "*", Path: "missing"})
	wantKind(t, "Glob under a missing directory", err, backend.ErrNotFound)
}

func checkGlobCapped(t *T, w *ws) {
	for i := range 7 {
		w.write(fmt.Sprintf("g/f%d.txt", i), "x")
	}
	res, err := w.FS().Glob(t.Context(), backend.GlobRequest{Pattern: "**/*.txt"})
	if err != nil || len(res.Paths) != 5 || !res.Truncated || !slices.IsSorted(res.Paths) {
		t.Errorf("Glob of 7 files at MaxResults 5 = %q (truncated %v), %v; want 5 sorted paths, truncated", res.Paths, res.Truncated, err)
	}
}

// grepTree holds text, a binary file and a near miss.
var grepTree = map[string]string{
	"a.txt":          "alpha\nbeta\ngamma alpha\n",
	"sub/b.txt":      "alpha in b\nnone\n",
	"sub/c.md":       "# alpha md\n",
	"sub/deep/d.txt": "xalphax\n",
	"bin.dat":        "alpha\x00binary\nalpha\n",
	"other.txt":      "ALPHA only in capitals\n",
}

func plantGrep(w *ws) {
	w.t.Helper()
	for p, c := range grepTree {
		w.write(p, c)
	}
}

func grep(t *T, w *ws, req backend.GrepRequest) []string {
	t.Helper()
	res, err := w.FS().Grep(t.Context(), req)
	if err != nil {
		t.Fatalf("Grep(%+v): %v", req, err)
	}
	out := make([]string, len(res.Matches))
	for i, m := range res.Matches {
		out[i] = fmt.Sprintf("%s:%d:%s", m.Path, m.Line, m.Text)
	}
	return out
}

func checkGrep(t *T, w *ws) {
	plantGrep(w)
	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{"alpha", []string{"a.txt:1:alpha", "a.txt:3:gamma alpha", "sub/b.txt:1:alpha in b", "sub/c.md:1:# alpha md", "sub/deep/d.txt:1:xalphax"}},
		{`^gam+a\s`, []string{"a.txt:3:gamma alpha"}},
		{`(?i)^alpha `, []string{"other.txt:1:ALPHA only in capitals", "sub/b.txt:1:alpha in b"}},
		{`\bnone$`, []string{"sub/b.txt:2:none"}},
		{"no such text", []string{}},
	} {
		if got := grep(t, w, backend.GrepRequest{Pattern: c.pattern}); !slices.Equal(got, c.want) {
			t.Errorf("Grep(%q) = %q, want %q (sorted by path and line, binary files skipped)", c.pattern, got, c.want)
		}
	}
}

func checkGrepGlob(t *T, w *ws) {
	plantGrep(w)
	for _, c := range []struct {
		glob string
		want []string
	}{
		{"*.md", []string{"sub/c.md:1:# alpha md"}},
		{"sub/*.txt", []string{"sub/b.txt:1:alpha in b"}},
		{"sub/**/*.txt", []string{"sub/b.txt:1:alpha in b", "sub/deep/d.txt:1:xalphax"}},
		{"*.dat", []string{}},
	} {
		if got := grep(t, w, backend.GrepRequest{Pattern: "alpha", Glob: c.glob}); !slices.Equal(got, c.want) {
			t.Errorf("Grep(alpha, glob %q) = %q, want %q", c.glob, got, c.want)
		}
	}
}

func checkGrepPath(t *T, w *ws) {
	plantGrep(w)
	for _, c := range []struct {
		path, glob string
		want       []string
	}{
		{"sub", "", []string{"sub/b.txt:1:alpha in b", "sub/c.md:1:# alpha md", "sub/deep/d.txt:1:xalphax"}},
		{"/sub/", "*.txt", []string{"sub/b.txt:1:alpha in b", "sub/deep/d.txt:1:xalphax"}},
		{"sub", "deep/*.txt", []string{"sub/deep/d.txt:1:xalphax"}},
		{"a.txt", "", []string{"a.txt:1:alpha", "a.txt:3:gamma alpha"}},
	} {
		if got := grep(t, w, backend.GrepRequest{Pattern: "alpha", Path: c.path, Glob: c.glob}); !slices.Equal(got, c.want) {
			t.Errorf("Grep(alpha, path %q, glob %q) = %q, want %q", c.path, c.glob, got, c.want)
		}
	}
}

func checkGrepErrors(t *T, w *ws) {
	plantGrep(w)
	ctx := t.Context()
	_, err := w.FS().Grep(ctx, backend.GrepRequest{Pattern: "("})
	wantKind(t, "Grep with an invalid regexp", err, backend.ErrInvalid)
	_, err = w.FS().Grep(ctx, backend.GrepRequest{Pattern: "a", Glob: "["})
	wantKind(t, "Grep with an invalid glob", err, backend.ErrInvalid)
	_, err = w.FS().Grep(ctx, backend.GrepRequest{Pattern: "a", Path: "missing"})
	wantKind(t, "Grep under a missing path", err, backend.ErrNotFound)
}

func checkGrepCapped(t *T, w *ws) {
	w.write("many.txt", strings.Repeat("match\n", 10))
	res, err := w.FS().Grep(t.Context(), backend.GrepRequest{Pattern: "match"})
	if err != nil || len(res.Matches) != 5 || !res.Truncated {
		t.Fatalf("Grep with 10 matches at MaxResults 5: %d matches, truncated %v, %v; want 5, truncated", len(res.Matches), res.Truncated, err)
	}
	for i, m := range res.Matches {
		if m.Line != i+1 {
			t.Errorf("capped Grep match %d is line %d, want line %d: the first matches", i, m.Line, i+1)
		}
	}
}

func checkRemoveFile(t *T, w *ws) {
	w.write("d/f.txt", "x")
	w.write("d/g.txt", "x")
	res, err := w.FS().Remove(t.Context(), backend.RemoveRequest{Path: "/d/f.txt"})
	if err != nil || res.Removed != 1 {
		t.Errorf("Remove of a file = %+v, %v; want 1 removed", res, err)
	}
	if w.exists("d/f.txt") || !w.exists("d/g.txt") {
		t.Errorf("Remove(d/f.txt): f.txt still there %v, its sibling gone %v", w.exists("d/f.txt"), !w.exists("d/g.txt"))
	}
}

func checkRemoveDir(t *T, w *ws) {
	for _, f := range []string{"d/a", "d/e/b", "empty/x"} {
		w.write(f, "x")
	}
	if _, err := w.FS().Remove(t.Context(), backend.RemoveRequest{Path: "empty/x"}); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	res, err := w.FS().Remove(t.Context(), backend.RemoveRequest{Path: "empty"})
	if err != nil || res.Removed != 1 || w.exists("empty") {
		t.Errorf("Remove of an empty directory without recursive = %+v, %v; want 1 removed", res, err)
	}
	_, err = w.FS().Remove(t.Context(), backend.RemoveRequest{Path: "d"})
	wantKind(t, "Remove of a non-empty directory without recursive", err, backend.ErrInvalid)
	if !w.exists("d/e/b") {
		t.Fatalf("a refused Remove removed files")
	}
	res, err = w.FS().Remove(t.Context(), backend.RemoveRequest{Path: "d", Recursive: true})
	if err != nil || res.Removed != 4 {
		t.Errorf("Remove recursive of d (d, d/a, d/e, d/e/b) = %+v, %v; want 4 removed", res, err)
	}
	if w.exists("d") {
		t.Errorf("Remove recursive left d behind")
	}
}

func checkRemoveRoot(t *T, w *ws) {
	w.write("a/keep.txt", "x")
	for _, p := range []string{"", ".", "/", "a/..", "/..", "..", "../..", "./"} {
		for _, rec := range []bool{false, true} {
			_, err := w.FS().Remove(t.Context(), backend.RemoveRequest{Path: p, Recursive: rec})
			wantKind(t, fmt.Sprintf("Remove(%q, recursive %v) of the root", p, rec), err, backend.ErrInvalid)
		}
	}
	if !w.exists("a/keep.txt") {
		t.Errorf("Remove of the root removed files")
	}
}

func checkRemoveMissing(t *T, w *ws) {
	_, err := w.FS().Remove(t.Context(), backend.RemoveRequest{Path: "missing", Recursive: true})
	wantKind(t, "Remove of a missing path", err, backend.ErrNotFound)
}
