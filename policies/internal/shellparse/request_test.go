package shellparse

import (
	"reflect"
	"strings"
	"testing"
)

// The interpreter line of a script is an argv; the script's reader is the
// last command it runs, and reading the script does not make it opaque
// (summary would mark it "!").
func TestAnalyzeInterpreter(t *testing.T) {
	for line, want := range map[string]string{
		"/bin/sh":                 "sh",
		"bash -e":                 "bash",
		"/usr/bin/env python3 -u": "env python3<env",
		"sudo  -u\tme sh":         "sudo sh<sudo",
		"rm -rf /":                "rm",
		" \t":                     "",
	} {
		an, reader := AnalyzeInterpreter(line)
		runs, problems := summary(an)
		if strings.Join(runs, " ") != want || problems != nil {
			t.Errorf("%q: runs %q problems %v, want %q", line, runs, problems, want)
		}
		if (reader == nil) != (want == "") || reader != nil && reader != &an.Runs[len(an.Runs)-1] {
			t.Errorf("%q: reader %+v, want the last run", line, reader)
		}
	}
}

// A request is an argv, or a shell string read in the dialect of the shell
// that runs it: the policies and shellcmd all read it through here.
func TestAnalyzeRequest(t *testing.T) {
	for _, tc := range []struct {
		command  []string
		shell    string
		runs     string // space-separated, as summary renders them
		problems []ProblemKind
	}{
		{[]string{"sudo", "rm", "x"}, "", "sudo rm<sudo", nil},
		// An argv is not shell code: ";" and "$(…)" are plain words.
		{[]string{"echo", "a;", "$(whoami)"}, "", "echo", nil},
		{[]string{"/bin/sh", "-c", "a | b"}, "a | b", "a b", nil},
		// |& is bash: bash reads it, sh does not, and a shell this
		// package does not read falls back to sh.
		{[]string{"/bin/bash", "-c", "a |& b"}, "a |& b", "a b", nil},
		{[]string{"/bin/sh", "-c", "a |& b"}, "a |& b", "", []ProblemKind{Unreadable}},
		{[]string{"zsh", "-c", "a |& b"}, "a |& b", "", []ProblemKind{Unreadable}},
		{nil, "a", "a", nil},
		{nil, "", "", nil},
	} {
		runs, problems := summary(AnalyzeRequest(tc.command, tc.shell))
		if strings.Join(runs, " ") != tc.runs || !reflect.DeepEqual(problems, tc.problems) {
			t.Errorf("%q %q: runs %q problems %v, want %q %v", tc.command, tc.shell, runs, problems, tc.runs, tc.problems)
		}
	}
	// The variables a request sets are not taken as known in its string.
	if an := AnalyzeRequest([]string{"/bin/sh", "-c", "ls"}, "ls", "HOME"); !reflect.DeepEqual(an.SetVars, []string{"HOME"}) {
		t.Errorf("env HOME: SetVars %q", an.SetVars)
	}
}
