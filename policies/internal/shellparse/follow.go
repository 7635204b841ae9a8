package shellparse

import "strings"

// run records args as a command that runs, then follows the commands it
// runs in turn.
func (z *analyzer) run(cmd int, args []Word, via string, d Dialect, depth int) {
	for len(args) > 0 {
		if depth > MaxDepth {
			z.problem(Unreadable, "commands nested more than %d deep", MaxDepth)
			return
		}
		depth++
		z.a.Runs = append(z.a.Runs, Run{Args: args, Command: cmd, Via: via})
		ri := len(z.a.Runs) - 1
		name := args[0]
		if !name.Literal {
			z.problem(DynamicCommand, "the command name %s is not literal: what it runs is known only when it runs", name.Value)
			return
		}
		base := Base(name.Value)
		next, nextVia := z.follow(ri, base, args, d, depth)
		if next == nil {
			return
		}
		args, via = next, nextVia
	}
}

// follow returns the command a run runs directly (nil if none), after
// analyzing the scripts and commands it runs indirectly.
func (z *analyzer) follow(ri int, name string, args []Word, d Dialect, depth int) ([]Word, string) {
	if z.followIndirect(ri, name, args, d, depth) {
		return nil, ""
	}
	g, ok := wrappers[name]
	if !ok {
		return nil, ""
	}
	o, ok := z.parseOptions(name, g, args)
	if !ok {
		return nil, ""
	}
	return z.wrapped(ri, name, o, args[o.rest:], depth)
}

// followIndirect analyzes the commands that do not run the words after
// their options as a command: shells, eval and trap run shell code,
// find its -exec commands, source a file, git and enable may run code
// no command line shows, and the rest set variables or change what
// later names run. It reports whether name is one of them.
func (z *analyzer) followIndirect(ri int, name string, args []Word, d Dialect, depth int) bool {
	cmd := z.a.Runs[ri].Command
	switch {
	case Shells[name]:
		z.shellCommand(ri, name, args, depth)
	case name == "eval":
		z.evalText(name, args[1:], d, depth)
	case name == "trap":
		z.trap(args[1:], d, depth)
	case name == "find":
		z.find(cmd, args, d, depth)
	case name == "." || name == "source":
		z.a.Runs[ri].Opaque = name + " runs the commands of a file"
	case setsVars(name):
		z.builtinSets(name, args, d)
	case name == "git":
		z.a.Runs[ri].Opaque = gitOpaque(args)
	case name == "enable":
		z.a.Runs[ri].Opaque = enableOpaque(args)
	case name == "alias":
		if len(args) > 1 {
			z.problem(Unsupported, "alias definitions change what later command names run: call the command itself")
		}
	case name == "hash":
		for _, a := range args[1:] {
			if !a.Literal || strings.HasPrefix(a.Value, "-") && strings.Contains(a.Value, "p") {
				z.problem(Unsupported, "hash -p changes what a command name runs: call the program by its path")
				break
			}
		}
	default:
		return false
	}
	return true
}

// wrapped returns the command a wrapper runs, given its options and the
// words after them (rest), and the wrapper's name as the run's Via. The
// wrappers whose options change what runs are special cases here.
func (z *analyzer) wrapped(ri int, name string, o options, rest []Word, depth int) ([]Word, string) {
	switch name {
	case "command":
		_, v := o.short['v']
		_, V := o.short['V']
		if v || V {
			return nil, "" // command -v NAME only says what NAME is
		}
	case "xargs":
		return z.xargs(o, rest), "xargs"
	case "flock":
		if z.flockShell(o, rest, depth) {
			return nil, ""
		}
	case "watch":
		if _, exec := o.short['x']; !exec {
			if _, exec = o.long["--exec"]; !exec {
				z.evalText(name, rest, POSIX, depth) // watch runs sh -c "ARGS…"
				return nil, ""
			}
		}
	case "chroot":
		if len(rest) == 0 && !o.incomplete {
			z.a.Runs[ri].Opaque = "chroot without a command runs an interactive shell"
		}
	case "busybox":
		if len(rest) > 0 && strings.HasPrefix(rest[0].Value, "-") {
			return nil, ""
		}
	}
	return rest, name
}

// flockShell follows the shell command line flock runs with -c, given
// before the lock file or after it (flock FILE -c CMD). It reports
// whether flock runs such a line rather than the command in rest.
func (z *analyzer) flockShell(o options, rest []Word, depth int) bool {
	if o.shell == "" && len(rest) >= 2 && rest[0].Literal && (rest[0].Value == "-c" || rest[0].Value == "--command") {
		if !rest[1].Literal {
			z.problem(DynamicCommand, "flock -c runs %s, known only when it runs", rest[1].Value)
			return true
		}
		o.shell = rest[1].Value
	}
	if o.shell != "" {
		z.shell(o.shell, POSIX, depth)
		return true
	}
	return false
}
