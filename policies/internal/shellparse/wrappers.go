package shellparse

import "strings"

// grammar is a wrapper's real command line: which options take a value,
// and what comes before the command it runs. Wrappers stop reading
// options at the first operand (GNU getopt's "+" mode), so the command is
// the first word after the options and positional operands.
type grammar struct {
	noArg  string // short options without a value
	arg    string // short options with a value, attached or the next word
	optArg string // short options with an optional value, attached only (xargs -i, -e, -l)
	// shellArg is a short option whose value is a shell command line
	// (flock -c); splitArg one whose value env splits into a command
	// line (env -S), which is refused.
	shellArg, splitArg byte
	longNoArg          []string
	longArg            []string
	longOptArg         []string // --name or --name=value, never the next word
	longSplit          []string
	positional         int  // operands before the command (timeout DURATION)
	assigns            bool // NAME=value words before the command (env)
	legacyNumeric      bool // nice -5
}

var help = []string{"--help", "--version"}

func longs(names ...string) []string { return append(names, help...) }

var wrappers = map[string]grammar{
	"sudo": {noArg: "AbEeHiKklnPSsVv", arg: "CDghpRrTtUu", assigns: true,
		longNoArg:  longs("--askpass", "--background", "--edit", "--set-home", "--login", "--remove-timestamp", "--reset-timestamp", "--list", "--non-interactive", "--preserve-groups", "--stdin", "--shell", "--validate"),
		longArg:    []string{"--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user", "--user"},
		longOptArg: []string{"--preserve-env"}},
	"doas": {noArg: "nsL", arg: "uC"},
	"env": {noArg: "i0v", arg: "uC", splitArg: 'S', assigns: true,
		longNoArg:  longs("--ignore-environment", "--null", "--debug", "--list-signal-handling"),
		longArg:    []string{"--unset", "--chdir"},
		longOptArg: []string{"--block-signal", "--default-signal", "--ignore-signal"},
		longSplit:  []string{"--split-string"}},
	"nice":    {arg: "n", longArg: []string{"--adjustment"}, longNoArg: longs(), legacyNumeric: true},
	"nohup":   {longNoArg: longs()},
	"timeout": {noArg: "fpv", arg: "ks", longNoArg: longs("--foreground", "--preserve-status", "--verbose"), longArg: []string{"--kill-after", "--signal"}, positional: 1},
	"stdbuf":  {arg: "ioe", longArg: []string{"--input", "--output", "--error"}, longNoArg: longs()},
	"setsid":  {noArg: "cfw", longNoArg: longs("--ctty", "--fork", "--wait")},
	"ionice":  {noArg: "t", arg: "cnpPu", longNoArg: longs("--ignore"), longArg: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}},
	"taskset": {noArg: "acp", longNoArg: longs("--all-tasks", "--pid", "--cpu-list"), positional: 1},
	"chrt":    {noArg: "abdfiorpRvem", arg: "TPD", longNoArg: longs("--all-tasks", "--batch", "--deadline", "--fifo", "--idle", "--other", "--rr", "--pid", "--reset-on-fork", "--verbose", "--max", "--ext"), longArg: []string{"--sched-runtime", "--sched-period", "--sched-deadline"}, positional: 1},
	"time":    {noArg: "apqvV", arg: "fo", longNoArg: longs("--append", "--portability", "--quiet", "--verbose"), longArg: []string{"--format", "--output"}},
	"chroot":  {longNoArg: longs("--skip-chdir"), longArg: []string{"--userspec", "--groups"}, positional: 1},
	"exec":    {noArg: "cl", arg: "a"},
	"builtin": {},
	"command": {noArg: "pvV"},
	"busybox": {},
	"xargs": {noArg: "0oprtx", arg: "aEILnPsd", optArg: "eil",
		longNoArg:  longs("--null", "--open-tty", "--interactive", "--no-run-if-empty", "--verbose", "--exit", "--show-limits"),
		longArg:    []string{"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"},
		longOptArg: []string{"--eof", "--replace", "--max-lines"}},
	"flock": {noArg: "sexunoFhV", arg: "wE", shellArg: 'c',
		longNoArg: longs("--shared", "--exclusive", "--unlock", "--nonblock", "--nb", "--close", "--no-fork", "--verbose"),
		longArg:   []string{"--wait", "--timeout", "--conflict-exit-code"}, positional: 1},
	"watch": {noArg: "bcCeghprtwx", arg: "nq", optArg: "d",
		longNoArg:  longs("--beep", "--color", "--no-color", "--errexit", "--chgexit", "--precise", "--no-rerun", "--no-title", "--no-wrap", "--exec"),
		longArg:    []string{"--interval", "--equexit"},
		longOptArg: []string{"--differences"}},
}

// IsWrapper reports whether a command name runs another command given in
// its arguments.
func IsWrapper(name string) bool {
	_, ok := wrappers[name]
	return ok || name == "find" || Shells[name] || name == "eval" || name == "trap"
}

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
	cmd := z.a.Runs[ri].Command
	switch {
	case Shells[name]:
		z.shellCommand(ri, name, args, depth)
		return nil, ""
	case name == "eval":
		z.evalText(name, args[1:], d, depth)
		return nil, ""
	case name == "trap":
		z.trap(args[1:], d, depth)
		return nil, ""
	case name == "find":
		z.find(cmd, args, d, depth)
		return nil, ""
	case name == "." || name == "source":
		z.a.Runs[ri].Opaque = name + " runs the commands of a file"
		return nil, ""
	case setsVars(name):
		z.builtinSets(name, args, d)
		return nil, ""
	case name == "git":
		z.a.Runs[ri].Opaque = gitOpaque(args)
		return nil, ""
	case name == "enable":
		z.a.Runs[ri].Opaque = enableOpaque(args)
		return nil, ""
	case name == "alias":
		if len(args) > 1 {
			z.problem(Unsupported, "alias definitions change what later command names run: call the command itself")
		}
		return nil, ""
	case name == "hash":
		for _, a := range args[1:] {
			if !a.Literal || strings.HasPrefix(a.Value, "-") && strings.Contains(a.Value, "p") {
				z.problem(Unsupported, "hash -p changes what a command name runs: call the program by its path")
				break
			}
		}
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
	rest := args[o.rest:]
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
		if o.shell == "" && len(rest) >= 2 && rest[0].Literal && (rest[0].Value == "-c" || rest[0].Value == "--command") {
			if !rest[1].Literal {
				z.problem(DynamicCommand, "flock -c runs %s, known only when it runs", rest[1].Value)
				return nil, ""
			}
			o.shell = rest[1].Value
		}
		if o.shell != "" {
			z.shell(o.shell, POSIX, depth)
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
