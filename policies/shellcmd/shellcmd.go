// Package shellcmd tells a policy plugin which commands a shell.exec
// request runs, however it arrived. A command comes as an argv, or, from
// every tool that takes a shell string (podman_shell, wai exec -c,
// shell_execute with ["sh","-c",…]), as ["/bin/sh","-c",STRING] with the
// string in CheckRequest.Shell: a policy that looks only at Command[0]
// sees "/bin/sh" and misses everything the string runs.
//
// Of reads the string as the shell would (mvdan.cc/sh), following
// pipes, lists, substitutions, sh -c and eval scripts, and wrappers such as
// sudo, env, xargs and timeout, and reports what it cannot judge so the
// policy can refuse that instead of guessing: among it a request that
// changes what a name runs (PATH=/workspace/bin ls, env PATH=… ls, PATH
// or LD_PRELOAD in the request's environment, a BASH_FUNC_ls%% function)
// and commands that run the programs their arguments or configuration
// name (git -c alias.x='!cmd', git rebase --exec). It is the parser the
// bundled allowlist and blocklist use, importable from outside this
// repository.
//
// What no command line shows stays unseen, whatever a policy does with
// it: the code an interpreter reads from a file or its input (python3
// runs any code it is given; evaluate_python sends its code on stdin),
// what a program's configuration runs (a repository's .git/config
// aliases, hooks and core.fsmonitor), and a program copied or renamed
// (cp /usr/bin/curl c; ./c is named "c"). A rule that denies names is a
// seatbelt; a list of allowed names that leaves out interpreters and
// shells and refuses programs run by a path outside the system bin
// directories (./c), as the bundled allowlist does, is the restriction.
package shellcmd

import (
	"github.com/wai-dev/wai/policies/internal/shellparse"
)

// Command is one command the request would run.
type Command struct {
	// Name is the command's base name: "/usr/bin/curl" is "curl".
	Name string
	// Args are its arguments after the name, as the shell would pass
	// them when they are literal; the others ($f, /etc/sha*, $(cmd), ~)
	// keep their source text, and Literal says which.
	Args []string
	// Literal[i] is true when Args[i] is exactly the argument the
	// command receives. A rule about arguments ("reads /etc/shadow")
	// judges only literal ones: `cat $f` or `cat /etc/sha*` may name the
	// same file, so treat a non-literal argument as unknown.
	Literal []bool
	// Via names the wrapper that runs it (sudo, env, xargs, sh), "" when
	// the shell runs it itself.
	Via string
}

// Computed reports whether some argument is known only when the command
// runs (not Literal): a rule about arguments cannot judge it.
func (c Command) Computed() bool {
	for _, l := range c.Literal {
		if !l {
			return true
		}
	}
	return false
}

// Result is what a request runs.
type Result struct {
	Commands []Command
	// Unjudgeable says why some command cannot be known before it runs
	// (a name in a variable, eval of computed text, a script file run
	// by a shell, text the parser cannot read, a PATH the request or the
	// command changes, git options that run programs); empty when every
	// command is in Commands and runs the program its name says. A
	// policy that judges names should refuse such a request: the
	// command it looks for may be hiding there.
	Unjudgeable []string
}

// Of returns the commands of a request: pass CheckRequest.Command,
// CheckRequest.Shell and CheckRequest.EnvKeys (the variables the request
// sets: PATH there changes what every name runs). With shell empty,
// command is an argv run without a shell; otherwise shell is read in the
// dialect command[0] names (sh, bash, dash, …; POSIX sh when it names
// none this package knows).
func Of(command []string, shell string, envKeys ...string) Result {
	an := shellparse.AnalyzeRequest(command, shell, envKeys...)
	var res Result
	if why := an.Retargeted(); why != "" {
		res.Unjudgeable = append(res.Unjudgeable, why)
	}
	for _, r := range an.Runs {
		c := Command{Name: r.Name(), Args: r.Values(), Literal: make([]bool, len(r.Args)-1), Via: r.Via}
		for i, w := range r.Args[1:] {
			c.Literal[i] = w.Literal
		}
		res.Commands = append(res.Commands, c)
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
