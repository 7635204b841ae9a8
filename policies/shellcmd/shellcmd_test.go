package shellcmd_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/wai-dev/wai/policies/shellcmd"
)

// A shell string hides its commands from Command[0]; Of finds them, and
// says when it cannot.
func TestOf(t *testing.T) {
	sh := []string{"/bin/sh", "-c"}
	for _, c := range []struct {
		command []string
		shell   string
		runs    bool
		unknown bool
	}{
		{[]string{"curl", "x"}, "", true, false},
		{[]string{"/usr/bin/curl", "x"}, "", true, false},
		{append(sh, "curl --version"), "curl --version", true, false},
		{append(sh, "echo a | sudo curl x && ls"), "echo a | sudo curl x && ls", true, false},
		{append(sh, `sh -c "x=\$(curl y)"`), `sh -c "x=\$(curl y)"`, true, false},
		{append(sh, "ls; echo curl"), "ls; echo curl", false, false},
		{append(sh, "$C x"), "$C x", false, true},
		{append(sh, "sh script.sh"), "sh script.sh", false, true},
		{[]string{"ls"}, "", false, false},
	} {
		runs, why := shellcmd.Of(c.command, c.shell).Runs("curl")
		if runs != c.runs || (why != "") != c.unknown {
			t.Errorf("%q %q: runs %v, why %q; want runs %v, unknown %v", c.command, c.shell, runs, why, c.runs, c.unknown)
		}
	}
	r := shellcmd.Of(append(sh, "sudo curl -s x"), "sudo curl -s x")
	if len(r.Commands) != 2 || r.Commands[1].Via != "sudo" || len(r.Commands[1].Args) != 2 {
		t.Errorf("commands of sudo curl: %+v", r.Commands)
	}
}

// A request that changes what a name runs is not plain ls: a policy that
// checks Unjudgeable refuses it however PATH was changed (newuser3 ran
// /workspace/bin/ls through a policy built on Of).
func TestOfRetargeted(t *testing.T) {
	sh := func(s string) []string { return []string{"/bin/sh", "-c", s} }
	for _, c := range []struct {
		command []string
		shell   string
		env     []string
		says    string
	}{
		{sh("PATH=/workspace/bin:$PATH ls"), "PATH=/workspace/bin:$PATH ls", nil, "PATH"},
		{sh("env PATH=/x ls"), "env PATH=/x ls", nil, "PATH"},
		{sh("export PATH=/x; ls"), "export PATH=/x; ls", nil, "PATH"},
		{[]string{"ls"}, "", []string{"PATH"}, "the request sets PATH"},
		{sh("ls"), "ls", []string{"BASH_FUNC_ls%%"}, "BASH_FUNC_ls%%"},
		{sh(`git -c alias.x='!id' x`), `git -c alias.x='!id' x`, nil, "git -c"},
	} {
		r := shellcmd.Of(c.command, c.shell, c.env...)
		if len(r.Unjudgeable) == 0 || !strings.Contains(strings.Join(r.Unjudgeable, "; "), c.says) {
			t.Errorf("%q env %v: unjudgeable %q, want it to say %q", c.shell, c.env, r.Unjudgeable, c.says)
		}
	}
	if r := shellcmd.Of([]string{"ls"}, "", "HOME", "LANG"); len(r.Unjudgeable) > 0 {
		t.Errorf("HOME and LANG made ls unjudgeable: %q", r.Unjudgeable)
	}
}

// Literal tells a rule about arguments which ones it can read: `cat $f`
// may name /etc/shadow as well as the literal path does.
func TestOfLiteralArgs(t *testing.T) {
	src := `cat /etc/passwd $f /etc/sha*dow "$(printf x)" ~/x 'a b'`
	r := shellcmd.Of([]string{"/bin/sh", "-c", src}, src)
	if len(r.Commands) != 2 {
		t.Fatalf("commands of %s: %+v", src, r.Commands)
	}
	cat := r.Commands[0]
	want := []bool{true, false, false, false, false, true}
	if !slices.Equal(cat.Literal, want) || len(cat.Args) != len(want) || !cat.Computed() {
		t.Errorf("cat: args %q literal %v, want %v (computed)", cat.Args, cat.Literal, want)
	}
	if plain := shellcmd.Of([]string{"cat", "$f"}, ""); plain.Commands[0].Computed() {
		t.Errorf("an argv word is what the command receives, $ or not: %+v", plain.Commands[0])
	}
}
