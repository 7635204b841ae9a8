package shellparse

import (
	"reflect"
	"strings"
	"testing"
)

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

// The interpreter line of a script is an argv; the script's reader is the
// last command it runs, and reading the script does not make it opaque.
func TestAnalyzeInterpreter(t *testing.T) {
	for _, tc := range []struct {
		line, runs, reader string
	}{
		{"/bin/sh", "sh", "sh"},
		{"bash -e", "bash", "bash"},
		{"/usr/bin/env python3 -u", "env python3<env", "python3"},
		{"sudo  -u\tme sh", "sudo sh<sudo", "sh"},
		{"rm -rf /", "rm", "rm"},
		{" \t", "", ""},
	} {
		an, reader := AnalyzeInterpreter(tc.line)
		runs, problems := summary(an)
		if strings.Join(runs, " ") != tc.runs || problems != nil {
			t.Errorf("%q: runs %q problems %v, want %q", tc.line, runs, problems, tc.runs)
		}
		switch {
		case reader == nil && tc.reader != "":
			t.Errorf("%q: no reader, want %s", tc.line, tc.reader)
		case reader != nil && (reader.Name() != tc.reader || reader != &an.Runs[len(an.Runs)-1]):
			t.Errorf("%q: reader %+v, want the last run, %s", tc.line, reader, tc.reader)
		}
	}
}
