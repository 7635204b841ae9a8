package shellparse

import "strings"

// shellCommand follows sh/bash -c SCRIPT; any other way of running a
// shell runs code from a file or its input.
func (z *analyzer) shellCommand(ri int, name string, args []Word, depth int) {
	cmode := false
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		if !a.Literal && cmode && !a.Split {
			break // the script, checked below
		}
		if !a.Literal {
			z.problem(DynamicArgs, "%s gets the word %s, known only when it runs: it could be an option or the script", name, a.Value)
			return
		}
		w := a.Value
		if w == "-" || w == "--" {
			i++
			break
		}
		if len(w) < 2 || w[0] != '-' && w[0] != '+' {
			break
		}
		if strings.HasPrefix(w, "--") {
			if w == "--rcfile" || w == "--init-file" {
				i++
			}
			continue
		}
		for j := 1; j < len(w); j++ {
			switch w[j] {
			case 'c':
				// +c does not read a command string: the operand is
				// a script file.
				cmode = cmode || w[0] == '-'
			case 'o', 'O':
				i++ // -o NAME
			}
		}
	}
	if !cmode {
		what := "commands from its input"
		if i < len(args) {
			what = "the script file " + args[i].Value
		}
		z.a.Runs[ri].Opaque = name + " without -c runs " + what
		return
	}
	if i >= len(args) {
		return // sh -c without a script: an error, nothing runs
	}
	if !args[i].Literal {
		z.problem(DynamicCommand, "%s -c runs %s, known only when it runs", name, args[i].Value)
		return
	}
	d, ok := DialectOf(name)
	if !ok {
		z.problem(Unreadable, "%s -c: policies read sh and bash scripts only", name)
		return
	}
	z.shell(args[i].Value, d, depth)
}

// evalText follows text that a command joins with spaces and runs as
// shell code (eval, watch).
func (z *analyzer) evalText(name string, args []Word, d Dialect, depth int) {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if !a.Literal {
			z.problem(DynamicCommand, "%s runs %s, known only when it runs", name, a.Value)
			return
		}
		parts = append(parts, a.Value)
	}
	if len(parts) > 0 {
		z.shell(strings.Join(parts, " "), d, depth)
	}
}

// trap follows a trap's action, shell code run on a signal or at exit.
func (z *analyzer) trap(args []Word, d Dialect, depth int) {
	if len(args) > 0 && args[0].Literal && args[0].Value == "--" {
		args = args[1:]
	}
	if len(args) == 0 || args[0].Literal && (args[0].Value == "-" || args[0].Value == "-l" || args[0].Value == "-p" || args[0].Value == "") {
		return
	}
	if !args[0].Literal {
		z.problem(DynamicCommand, "trap runs %s, known only when it runs", args[0].Value)
		return
	}
	z.shell(args[0].Value, d, depth)
}
