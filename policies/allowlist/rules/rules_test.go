package rules

import (
	"reflect"
	"strings"
	"testing"

	"github.com/wai-dev/wai/policies/internal/shellparse"
)

func TestConfig(t *testing.T) {
	if _, err := ParseConfig([]byte(`{"command":["ls"]}`)); err == nil || !strings.Contains(err.Error(), "command") {
		t.Fatalf("unknown key: %v", err)
	}
	for _, bad := range []string{"", "/bin/ls", "a b"} {
		if _, err := New(Config{Commands: []string{bad}}); err == nil {
			t.Errorf("command name %q was accepted", bad)
		}
	}
	a, err := New(Config{Commands: []string{"ls", "cat", "ls"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Commands(); !reflect.DeepEqual(got, []string{"cat", "ls"}) {
		t.Fatalf("Commands() = %v", got)
	}
}

func TestEmptyListDeniesEverything(t *testing.T) {
	a, _ := New(Config{})
	if ok, reason := a.Check(Request{Action: "shell.exec", Command: []string{"ls"}}); ok || !strings.Contains(reason, "ls") {
		t.Fatalf("empty allowlist allowed ls: %v %q", ok, reason)
	}
	if ok, _ := a.Check(Request{Action: "fs.write"}); !ok {
		t.Fatal("the allowlist judged a file write")
	}
}

// FuzzCheck: no input panics, a deny always says why, and an allowed shell
// string only runs listed commands.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"ls", "ls | cat", "sudo ls", "env -u X ls", "$(ls)", "'", "f(){ ls; }"} {
		f.Add(s)
	}
	a, _ := New(Config{Commands: []string{"ls", "cat", "echo"}})
	f.Fuzz(func(t *testing.T, s string) {
		ok, reason := a.Check(Request{Action: "shell.exec", Command: []string{"/bin/sh", "-c", s}, Shell: s})
		if !ok && reason == "" {
			t.Fatalf("%q denied without a reason", s)
		}
		if ok {
			for _, r := range shellparse.AnalyzeShell(s, shellparse.POSIX).Runs {
				if n := r.Name(); n != "ls" && n != "cat" && n != "echo" {
					t.Fatalf("%q was allowed but runs %q", s, n)
				}
			}
		}
		a.Check(Request{Action: "shell.exec", Command: strings.Fields(s)})
		a.Check(Request{Action: "shell.script", Command: []string{"/bin/sh"}, Script: s})
	})
}
