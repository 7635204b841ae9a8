package rules

import (
	"strings"
	"testing"
)

func exec(shell string) Request {
	return Request{Action: "shell.exec", Command: []string{"/bin/sh", "-c", shell}, Shell: shell}
}

func TestConfig(t *testing.T) {
	if _, err := ParseConfig([]byte(`{"patern":["x"]}`)); err == nil || !strings.Contains(err.Error(), "patern") {
		t.Fatalf("unknown key: %v", err)
	}
	if _, err := New(Config{DisableRules: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "rm-root") {
		t.Fatalf("unknown rule must list the rules: %v", err)
	}
	if _, err := New(Config{ExtraPatterns: []string{" "}}); err == nil {
		t.Fatal("an empty pattern was accepted")
	}
	if _, err := New(Config{MaxCommandBytes: -1}); err == nil {
		t.Fatal("a negative limit was accepted")
	}
	c, err := ParseConfig([]byte(`{"patterns":["shutdown"],"extra_patterns":["reboot"],"max_command_bytes":20,"disable_rules":["rm-root"]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	for shell, allow := range map[string]bool{
		"shutdown now":          false, // replaced patterns
		"sudo reboot":           false, // extra pattern
		"mkfs /dev/sda1":        false, // structural rule still on
		"rm -rf /":              true,  // default pattern replaced, rm-root off
		"echo 123456789012345":  true,  // 20 bytes
		"echo 1234567890123456": false, // 21 bytes
	} {
		if ok, reason := b.Check(exec(shell)); ok != allow {
			t.Errorf("%q: allow=%v (%s), want %v", shell, ok, reason, allow)
		}
	}
}

func TestDefaultsAreValid(t *testing.T) {
	if Default() == nil {
		t.Fatal("no default blocklist")
	}
	for _, p := range DefaultPatterns {
		if _, ok := patternWhy[p]; !ok {
			t.Errorf("default pattern %q says nothing about why", p)
		}
		if ok, _ := Default().Check(exec(p)); ok {
			t.Errorf("default pattern %q is not denied by itself", p)
		}
	}
}

// FuzzCheck: no input panics, and a deny always says why.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"rm -rf /", "ls", "curl x|sh", ":(){ :|:& };:", "sh -c 'sh -c \"rm -r /\"'", "find / -delete", "$("} {
		f.Add(s, true)
	}
	b := Default()
	f.Fuzz(func(t *testing.T, s string, shell bool) {
		req := exec(s)
		if !shell {
			req = Request{Action: "shell.exec", Command: strings.Fields(s)}
		}
		if ok, reason := b.Check(req); !ok && reason == "" {
			t.Fatalf("%q denied without a reason", s)
		}
		b.Check(Request{Action: "shell.script", Command: []string{"/bin/sh"}, Script: s})
	})
}

// A script's interpreter line is judged as the argv the backends run, and
// the structural rules read the script whenever a shell reads it, also
// through a wrapper.
func TestScriptInterpreter(t *testing.T) {
	b := Default()
	for _, c := range []struct {
		interp, script, deny string // deny: what the reason says, "" to allow
	}{
		{"/bin/sh", "rm -r -f /\n", "recursive rm"},
		{"", "rm -r -f /\n", "recursive rm"}, // no interpreter: /bin/sh
		{"/usr/bin/env bash", "rm -r -f /\n", "recursive rm"},
		{"sudo -u root sh -e", "reboot\n", "reboot stops"},
		{"rm -r -f /", "echo\n", "recursive rm"},
		{"reboot", "echo\n", "reboot stops"},
		{"env -S sh", "echo\n", "cannot judge"},
		{"/usr/bin/env python3", "rm -r -f /\n", ""}, // python: patterns only
		{"zsh", "rm -r -f /\n", ""},                  // a language it does not read
		{"/usr/bin/env bash", "rm -r build\n", ""},
	} {
		ok, reason := b.Check(Request{Action: "shell.script", Command: []string{c.interp}, Script: c.script})
		if ok != (c.deny == "") || !strings.Contains(reason, c.deny) {
			t.Errorf("%q running %q: allow=%v %q, want deny saying %q", c.interp, c.script, ok, reason, c.deny)
		}
	}
}
