package backend

import (
	"slices"
	"testing"
)

func TestRequestAndResultHelpers(t *testing.T) {
	if got := (ExecRequest{Shell: "ls | wc"}).Command(); !slices.Equal(got, []string{"/bin/sh", "-c", "ls | wc"}) {
		t.Fatalf("shell Command() = %q", got)
	}
	if got := (ExecRequest{Argv: []string{"ls", "-l"}}).Command(); !slices.Equal(got, []string{"ls", "-l"}) {
		t.Fatalf("argv Command() = %q", got)
	}
	for _, c := range []struct {
		r    ExecResult
		want bool
	}{{ExecResult{}, true}, {ExecResult{ExitCode: 1}, false}, {ExecResult{TimedOut: true}, false}, {ExecResult{ExitCode: 124, TimedOut: true}, false}} {
		if c.r.Success() != c.want {
			t.Errorf("%+v.Success() = %v", c.r, !c.want)
		}
	}
	if (WhichResult{Command: "x"}).Found() || !(WhichResult{Command: "x", Path: "/x"}).Found() {
		t.Fatal("WhichResult.Found")
	}
	s := NewEnvSnapshot(map[string]string{"Z": "1", "A": "2", "M": ""}, "/w", "/bin/sh")
	if !slices.EqualFunc(s.Vars, []EnvVar{{"A", "2"}, {"M", ""}, {"Z", "1"}}, func(a, b EnvVar) bool { return a == b }) {
		t.Fatalf("not sorted: %v", s.Vars)
	}
	if v, ok := s.Get("M"); !ok || v != "" {
		t.Fatal("Get of an empty variable")
	}
	if _, ok := s.Get("Q"); ok {
		t.Fatal("Get of a missing variable")
	}
	m := s.Map()
	m["A"] = "changed"
	if v, _ := s.Get("A"); v != "2" || len(m) != 3 || s.Cwd != "/w" || s.Shell != "/bin/sh" {
		t.Fatal("Map() must be a copy")
	}
}
