// Package shellcmd tells a policy plugin which commands a shell.exec
// request runs, however it arrived. A command comes as an argv, or, from
// every tool that takes a shell string (podman_shell, wai exec -c,
// shell_execute with ["sh","-c",…]), as ["/bin/sh","-c",STRING] with the
// string in CheckRequest.Shell: a policy that looks only at Command[0]
// sees "/bin/sh" and misses everything the string runs.
//
// Names reads the string as the shell would (mvdan.cc/sh), following
// pipes, lists, substitutions, sh -c and eval scripts, and wrappers such as
// sudo, env, xargs and timeout, and reports what it cannot judge so the
// policy can refuse that instead of guessing. It is the parser the bundled
// allowlist and blocklist use, importable from outside this repository.
package shellcmd

import (
	"github.com/wai-dev/wai/policies/internal/shellparse"
)

// Command is one command the request would run.
type Command struct {
	// Name is the command's base name: "/usr/bin/curl" is "curl".
	Name string
	// Args are its arguments after the name, as the shell would pass
	// them when they are literal.
	Args []string
	// Via names the wrapper that runs it (sudo, env, xargs, sh), "" when
	// the shell runs it itself.
	Via string
}

// Result is what a request runs.
type Result struct {
	Commands []Command
	// Unjudgeable says why some command cannot be known before it runs
	// (a name in a variable, eval of computed text, a script file run
	// by a shell, text the parser cannot read); empty when every command
	// is in Commands. A policy that denies by name should refuse such a
	// request: the command it looks for may be hiding there.
	Unjudgeable []string
}

// Of returns the commands of a request: pass CheckRequest.Command and
// CheckRequest.Shell. With shell empty, command is an argv run without a
// shell; otherwise shell is read in the dialect command[0] names (sh,
// bash, dash, …; POSIX sh when it names none this package knows).
func Of(command []string, shell string) Result {
	an := shellparse.AnalyzeRequest(command, shell)
	var res Result
	for _, r := range an.Runs {
		res.Commands = append(res.Commands, Command{Name: r.Name(), Args: r.Values(), Via: r.Via})
		if r.Opaque != "" {
			res.Unjudgeable = append(res.Unjudgeable, r.Opaque)
		}
	}
	for _, p := range an.Problems {
		res.Unjudgeable = append(res.Unjudgeable, p.Reason)
	}
	return res
}

// Runs reports whether the request runs a command of that base name,
// and, when it cannot tell, why not (then runs is false and why is not
// empty: refuse rather than allow).
func (r Result) Runs(name string) (runs bool, why string) {
	for _, c := range r.Commands {
		if c.Name == name {
			return true, ""
		}
	}
	if len(r.Unjudgeable) > 0 {
		return false, r.Unjudgeable[0]
	}
	return false, ""
}
