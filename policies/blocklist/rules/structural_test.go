package rules

import "testing"

// The recursive rules read options as GNU tools do: in any spelling,
// anywhere before "--", and nothing after it as an option.
func TestRecursiveRules(t *testing.T) {
	cases := []struct {
		args []string
		rm   string // what rmRoot says, "" for nothing
	}{
		{[]string{"-rf", "/"}, `recursive rm of "/" (the root directory)`},
		{[]string{"-f", "-R", "/usr"}, `recursive rm of "/usr" (a system directory)`},
		{[]string{"/etc", "--recursive"}, `recursive rm of "/etc" (a system directory)`},
		{[]string{"--recur", "~"}, `recursive rm of "~" (a home directory)`},
		{[]string{"--re", "/"}, ""}, // too short to be --recursive for sure
		{[]string{"-r", "--no-pres", "./build"}, "recursive rm with --no-preserve-root"},
		{[]string{"-f", "/"}, ""},
		{[]string{"-r", "./build", "-v"}, ""},
		{[]string{"--", "-r", "/"}, ""},
		{[]string{"-r", "--", "-", "/var"}, `recursive rm of "/var" (a system directory)`},
	}
	for _, c := range cases {
		if got := rmRoot(c.args); got != c.rm {
			t.Errorf("rm %q: %q, want %q", c.args, got, c.rm)
		}
	}
	chmod := []struct {
		args []string
		want string
	}{
		{[]string{"-R", "777", "/"}, `recursive chmod of "/" (the root directory)`},
		{[]string{"-vR", "777", "/etc"}, `recursive chmod of "/etc" (a system directory)`},
		{[]string{"--recursive", "-v", "777", "$HOME"}, `recursive chmod of "$HOME" (the home directory)`},
		{[]string{"-r", "777", "/"}, ""}, // -r is a mode here, not recursion
		{[]string{"--reference=/x", "/"}, ""},
		{[]string{"777", "--", "-R", "/"}, ""},
	}
	for _, c := range chmod {
		if got := recursiveOnDanger("chmod", c.args); got != c.want {
			t.Errorf("chmod %q: %q, want %q", c.args, got, c.want)
		}
	}
}
