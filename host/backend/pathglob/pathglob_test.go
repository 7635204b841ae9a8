package pathglob

import (
	"path"
	"strings"
	"testing"
)

// The NFA agrees with a direct recursive definition of "**", also on a
// pattern of no segments and on a run of "**".
func TestMatchAgreesWithDefinition(t *testing.T) {
	var ref func(pat, segs []string) bool
	ref = func(pat, segs []string) bool {
		if len(pat) == 0 {
			return len(segs) == 0
		}
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if ref(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		ok, _ := path.Match(pat[0], segs[0])
		return ok && ref(pat[1:], segs[1:])
	}
	pats := []string{"**", "*", "a/**", "**/b", "a/**/b", "**/a/**/b/**", "*/*", "a/*/**/c", "**/**/x", "[ab]/**/?", "a/**/**"}
	paths := []string{"a", "b", "a/b", "a/b/c", "x/a/y/b", "a/a/b/b/c", "c/x", "b/q", "a/x/y/c", "q", "x"}
	for _, p := range pats {
		g := New(strings.Split(p, "/"))
		for _, q := range paths {
			segs := strings.Split(q, "/")
			if got, want := g.Match(segs), ref(strings.Split(p, "/"), segs); got != want {
				t.Errorf("%q matching %q: %v, want %v", p, q, got, want)
			}
		}
	}
	if none := New(nil); !none.Match(nil) || none.Match([]string{"a"}) {
		t.Error("a pattern of no segments matches exactly the empty path")
	}
}

// A long chain of "**" stays linear, and a walk learns early that no
// longer path can match.
func TestStepStaysLinearAndPrunes(t *testing.T) {
	g := New(strings.Split(strings.Repeat("**/a/", 200)+"b", "/"))
	s := g.Start()
	for range 300 {
		s = g.Step(s, "a")
	}
	if s.Accepts() || !s.Alive() {
		t.Fatalf("after 300 a: accepts %v, alive %v; want a b still to come", s.Accepts(), s.Alive())
	}
	fixed := New([]string{"src", "*.go"})
	if s := fixed.Step(fixed.Start(), "docs"); s.Alive() || s.Accepts() {
		t.Error("src/*.go is still alive under docs: a walk could not prune it")
	}
	if s := fixed.Step(fixed.Step(fixed.Start(), "src"), "a.go"); !s.Accepts() || s.Alive() {
		t.Errorf("src/a.go: accepts %v, alive %v", s.Accepts(), s.Alive())
	}
}
