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

// Only a command whose one fault is a name missing from the list is put to
// a person; what the allowlist cannot judge, or judges dangerous, is
// denied; with ask = false nothing is asked.
func TestJudgeAsksOnlyForUnlistedNames(t *testing.T) {
	a, _ := New(Config{Commands: []string{"echo", "sh"}})
	for _, c := range []struct {
		req  Request
		want string // allow | ask | deny
		has  string
	}{
		{Request{Action: "shell.exec", Command: []string{"echo", "x"}}, "allow", ""},
		{Request{Action: "shell.exec", Command: []string{"curl", "x"}}, "ask", `"curl" is not in the allowlist`},
		{Request{Action: "shell.exec", Shell: "curl a | wc -l", Command: []string{"/bin/sh", "-c", "curl a | wc -l"}}, "ask", `"wc" is not in the allowlist`},
		{Request{Action: "shell.exec", Command: []string{"./curl"}}, "deny", "outside the system bin"},
		{Request{Action: "shell.exec", Command: []string{"curl"}, EnvKeys: []string{"LD_PRELOAD"}}, "deny", "LD_PRELOAD"},
		{Request{Action: "shell.exec", Shell: "curl a; sh x.sh", Command: []string{"/bin/sh", "-c", "curl a; sh x.sh"}}, "deny", "cannot see: give them as sh -c '…'"},
		// . has no -c: the advice must be one that works.
		{Request{Action: "shell.exec", Shell: ". ./x", Command: []string{"/bin/sh", "-c", ". ./x"}}, "deny", "cannot see: give the commands themselves (or as sh -c '…')"},
		// Control flow and here-documents are read, not refused.
		{Request{Action: "shell.exec", Shell: "for i in 1; do echo $i; done", Command: []string{"/bin/sh", "-c", "for i in 1; do echo $i; done"}}, "allow", ""},
		{Request{Action: "shell.exec", Shell: "sh <<E\necho\nE", Command: []string{"/bin/sh", "-c", "sh <<E\necho\nE"}}, "deny", "cannot see"},
		{Request{Action: "shell.script", Command: []string{"sh"}, Script: "curl a\n"}, "ask", `"curl"`},
	} {
		v := a.Judge(c.req)
		got := "deny"
		switch {
		case v.Allow:
			got = "allow"
		case v.Ask:
			got = "ask"
		}
		if got != c.want || !strings.Contains(v.Reason, c.has) {
			t.Errorf("%+v: got %s %q, want %s saying %q", c.req, got, v.Reason, c.want, c.has)
		}
		if ok, _ := a.Check(c.req); ok != (c.want == "allow") {
			t.Errorf("%+v: Check allowed %v", c.req, ok)
		}
	}
	no := false
	strict, _ := New(Config{Commands: []string{"echo"}, Ask: &no})
	if v := strict.Judge(Request{Action: "shell.exec", Command: []string{"curl"}}); v.Allow || v.Ask {
		t.Errorf("ask = false still asked: %+v", v)
	}
}

// Listing git allows git, not the programs its options run; and no listed
// name is allowed once the request changes what names run. newuser3 ran
// id through commands = ["git", "ls"] each of these ways.
func TestGitAndRetargetedDenied(t *testing.T) {
	a, _ := New(Config{Commands: []string{"git", "ls", "env"}})
	for _, c := range []struct {
		shell string
		env   []string
		deny  string // "" allows
	}{
		{`git -c alias.x='!id' x`, nil, "write git's options literally, without -c"},
		{`git -c core.fsmonitor='id >&2' status`, nil, "git -c sets configuration"},
		{`git --config-env=core.pager=P log`, nil, "--config-env"},
		{`git clone --upload-pack=id /r x`, nil, "--upload-pack"},
		{`git rebase --exec id HEAD~1`, nil, "--exec"},
		{`PATH=/workspace/bin:$PATH ls`, nil, "the command sets PATH"},
		{`env PATH=/x ls`, nil, "the command sets PATH"},
		{`ls`, []string{"PATH"}, "the request sets PATH"},
		{`git log`, []string{"GIT_PAGER"}, "GIT_PAGER"},
		{`env GIT_CONFIG_PARAMETERS="'alias.x=!id'" git x`, nil, "GIT_CONFIG_PARAMETERS"},
		{`git status && git log -p -- a`, nil, ""},
	} {
		v := a.Judge(Request{Action: "shell.exec", Command: []string{"/bin/sh", "-c", c.shell}, Shell: c.shell, EnvKeys: c.env})
		if v.Allow != (c.deny == "") || v.Ask || !strings.Contains(v.Reason, c.deny) {
			t.Errorf("%s env %v: %+v, want deny saying %q (\"\" allows)", c.shell, c.env, v, c.deny)
		}
	}
}
