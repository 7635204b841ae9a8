package shellparse

import "strings"

// AnalyzeRequest analyzes a shell.exec request as every policy receives
// it: the request's Command and Shell. With shell empty, command is an
// argv that no shell reads. Otherwise command is the invocation that runs
// shell (["/bin/sh","-c",shell] from every tool that takes a shell string)
// and shell is read in the dialect command[0] names, POSIX sh when it
// names none this package reads. env names the variables the request sets
// (see AnalyzeShell and Retargeted); an argv has no expansions for them
// to change, but PATH still decides what its name runs.
//
// The allowlist, the blocklist and the public shellcmd package all start
// here, so they cannot disagree about what a request runs.
func AnalyzeRequest(command []string, shell string, env ...string) *Analysis {
	if shell == "" {
		an := AnalyzeArgv(command)
		an.Env = env
		return an
	}
	d := POSIX
	if len(command) > 0 {
		if sd, ok := DialectOf(command[0]); ok {
			d = sd
		}
	}
	return AnalyzeShell(shell, d, env...)
}

// AnalyzeInterpreter analyzes the interpreter line of a shell.script
// request (its Command[0]). The backends split the line on blanks, as a
// kernel splits a shebang line, and run the words with the script as their
// last argument or their input: so the line is an argv that runs commands
// of its own ("rm -rf /" is a line too), and the script's reader is the
// last command it runs (python3 in "/usr/bin/env python3", sh in "sudo
// sh"). The reader's Opaque is cleared: the script it reads is not hidden
// from the policy, which judges it next. reader is nil for a blank line.
func AnalyzeInterpreter(line string) (an *Analysis, reader *Run) {
	an = AnalyzeArgv(strings.Fields(line))
	if len(an.Runs) == 0 {
		return an, nil
	}
	reader = &an.Runs[len(an.Runs)-1]
	reader.Opaque = ""
	return an, reader
}
