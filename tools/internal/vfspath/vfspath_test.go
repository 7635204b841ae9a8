package vfspath

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	deep := strings.Repeat("a/", MaxDepth) + "a"
	ok := strings.Repeat("a/", MaxDepth-1) + "a"
	long := strings.Repeat("x", MaxSegment+1)
	for _, c := range []struct{ in, want, err string }{
		{in: "", want: ""},
		{in: "/", want: ""},
		{in: "/workspace", want: ""},
		{in: "/workspace/", want: ""},
		{in: "/workspace/src/a.py", want: "src/a.py"},
		{in: "/workspaces/a", want: "workspaces/a"},
		{in: "src//a.py/", want: "src/a.py"},
		{in: "workspace/a", want: "workspace/a"},
		{in: ok, want: ok},
		{in: strings.Repeat("x", MaxSegment), want: strings.Repeat("x", MaxSegment)},
		{in: "a/../b", err: "Path segments may not include '.' or '..'."},
		{in: "./a", err: "Path segments may not include '.' or '..'."},
		{in: ".", want: ""}, // the shell's name for the working directory, the root
		{in: "./", want: ""},
		{in: "/workspace/.", want: ""},
		{in: "a/.", err: "Path segments may not include '.' or '..'."},
		{in: "café.txt", err: "path must contain only printable ASCII characters"},
		{in: "a\x00b", err: "path must contain only printable ASCII characters"},
		{in: "a\nb", err: "path must contain only printable ASCII characters"},
		{in: long, err: "Path segment exceeds the allowed length (80 characters)"},
		{in: deep, err: "Path depth exceeds the allowed limit (16 segments)."},
	} {
		got, err := Normalize("path", c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Normalize(%q) = %q, %v; want error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestFileRefusesRoot(t *testing.T) {
	for _, in := range []string{"", "/", "/workspace", "."} {
		if _, err := File("file_path", in); !errors.Is(err, ErrRoot) {
			t.Errorf("File(%q): %v", in, err)
		}
	}
	if got, err := File("file_path", "/workspace/a"); err != nil || got != "a" || Display(got) != "a" || Display("") != "." {
		t.Errorf("File: %q, %v", got, err)
	}
}

// OutsideHint speaks only of absolute paths outside /workspace.
func TestOutsideHint(t *testing.T) {
	for in, want := range map[string]bool{"/etc/passwd": true, "/usr": true, "/workspace/a": false, "/workspace": false, "a/b": false, "/": false, "": false} {
		if got := OutsideHint(in) != ""; got != want {
			t.Errorf("OutsideHint(%q) = %q", in, OutsideHint(in))
		}
	}
}

// TookInside speaks only of absolute paths outside /workspace, and names
// where a command finds the file.
func TestTookInside(t *testing.T) {
	if got := TookInside("/tmp/x.txt", "tmp/x.txt"); !strings.Contains(got, "a command finds this file at /workspace/tmp/x.txt, not at /tmp/x.txt") {
		t.Errorf("TookInside(/tmp/x.txt) = %q", got)
	}
	for _, given := range []string{"/workspace/a", "a", "/"} {
		if got := TookInside(given, "a"); got != "" {
			t.Errorf("TookInside(%q) = %q, want nothing", given, got)
		}
	}
}
