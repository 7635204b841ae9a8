package shellcmd_test

import (
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
