package shellparse

import (
	"fmt"
	"strings"
)

// runVars are the environment and shell variables that decide which
// program a command runs, or make a program run code of their choosing:
// a command that sets one is not the command its name says. The value
// finishes "…, which …" in a reason; the table gives each reason once.
var runVars = byName(map[string][]string{
	"decides which program a command name runs":     {"PATH"},
	"names a file of commands the shell runs first": {"BASH_ENV", "ENV"},
	// Shell options such as xtrace make the shell expand PS4, and
	// PROMPT_COMMAND runs as commands.
	"turns on shell options that run code": {"SHELLOPTS", "BASHOPTS"},
	"the shell expands as code":            {"PS4"},
	"the shell runs as commands":           {"PROMPT_COMMAND"},
	// The dynamic loader and glibc load code named here into every
	// program, whatever its name.
	"loads code into every program": {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH"},
	// Programs run the command these name (git commit runs $EDITOR, git
	// log $PAGER, git fetch $GIT_SSH_COMMAND, less $LESSOPEN).
	"names a program other programs run": {"EDITOR", "VISUAL", "PAGER", "MANPAGER", "BROWSER", "SSH_ASKPASS", "LESSOPEN", "LESSCLOSE"},
	"names a program git runs": {"GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_SSH",
		"GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_PROXY_COMMAND"},
	"decides which programs git runs":            {"GIT_EXEC_PATH"},
	"gives new repositories hooks that git runs": {"GIT_TEMPLATE_DIR"},
})

// byName turns a table of variable names by reason into one reason by
// name. A name listed under two reasons would get either at random, so
// it stops every program that reads the table, as a duplicate key in a
// map literal stops the build.
func byName(byReason map[string][]string) map[string]string {
	out := map[string]string{}
	for how, names := range byReason {
		for _, n := range names {
			if _, dup := out[n]; dup {
				panic("shellparse: runVars lists " + n + " twice")
			}
			out[n] = how
		}
	}
	return out
}

// runVarPrefixes name families of such variables: bash imports
// BASH_FUNC_name%% as a function that replaces the command name, and
// GIT_CONFIG_* (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT/KEY_n/VALUE_n,
// GIT_CONFIG_GLOBAL, …) give git configuration, which can run programs
// (aliases "!cmd", core.fsmonitor, core.pager).
var runVarPrefixes = map[string]string{
	"BASH_FUNC_": "defines a shell function that replaces a command",
	"GIT_CONFIG": "gives git configuration that can run any program",
}

// RunVar reports whether setting the variable can change what a command
// runs, and how (what finishes "NAME, which …").
func RunVar(name string) (how string, ok bool) {
	if how, ok := runVars[name]; ok {
		return how, true
	}
	for p, how := range runVarPrefixes {
		if strings.HasPrefix(name, p) {
			return how, true
		}
	}
	return "", false
}

// EnvRunVar says why a request whose environment sets these variables
// cannot be judged by its command names, or "" when none is a RunVar.
func EnvRunVar(keys []string) string {
	for _, k := range keys {
		if how, ok := RunVar(k); ok {
			return fmt.Sprintf("the request sets %s, which %s", k, how)
		}
	}
	return ""
}

// Retargeted says why the commands of the analysis may not run the
// programs their names say: the request's environment (Env) or the
// commands themselves (export, assignments, env NAME=…, for NAME in …)
// set a RunVar. It is "" when nothing does.
func (an *Analysis) Retargeted() string {
	if why := EnvRunVar(an.Env); why != "" {
		return why
	}
	for _, v := range an.SetVars {
		if how, ok := RunVar(v); ok {
			return fmt.Sprintf("the command sets %s, which %s", v, how)
		}
	}
	if len(an.HiddenSets) > 0 {
		return an.HiddenSets[0]
	}
	return ""
}

// varBuiltins are the builtins whose operands are variables they set,
// with the short options that take a value (skipped: read -p PROMPT).
// getopts and printf name one variable each (getopts OPTSTRING NAME,
// printf -v NAME).
var varBuiltins = map[string]string{
	"export": "", "readonly": "", "local": "", "declare": "", "typeset": "", "nameref": "",
	"unset": "", "read": "dinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc",
}

func setsVars(name string) bool {
	_, ok := varBuiltins[name]
	return ok || name == "getopts" || name == "printf"
}

// builtinSets records the variables a builtin sets. POSIX sh reads
// export PATH="$x" as a command whose word is not literal, so the name
// is read from the word's text up to "="; an operand whose name is known
// only when it runs (export "$n=…", read $n) could be PATH, and so could
// the variable a nameref (declare -n r=PATH) refers to.
func (z *analyzer) builtinSets(name string, args []Word, d Dialect) {
	operands, nameref := z.varOperands(name, args[1:], d)
	for _, a := range operands {
		n, val, hasVal := strings.Cut(a.Value, "=")
		// arr[i]=x and bash's PATH+=x set arr and PATH.
		if i := strings.IndexByte(n, '['); i > 0 {
			n = n[:i]
		}
		n = strings.TrimSuffix(n, "+")
		switch {
		case !IsName(n):
			z.hiddenSet("%s %s sets a variable whose name is known only when it runs: it could be PATH", name, a.Value)
		case !nameref:
			z.setVar(n)
		case hasVal && a.Literal && IsName(val):
			z.setVar(n)
			z.setVar(val)
		default:
			z.hiddenSet("%s -n %s makes %s refer to a variable named when it runs: it could be PATH", name, a.Value, n)
		}
	}
}

// varOperands returns the operands of a builtin that name variables, and
// whether they are namerefs (declare -n, local -n, typeset -n, nameref).
// Only bash's printf has -v, so only there can printf "$fmt" set one.
func (z *analyzer) varOperands(name string, args []Word, d Dialect) (operands []Word, nameref bool) {
	nameref = name == "nameref"
	switch name {
	case "getopts":
		return args[min(1, len(args)):min(2, len(args))], false
	case "printf":
		for i, a := range args {
			switch {
			case a.Literal && a.Value == "-v" && i+1 < len(args):
				return args[i+1 : i+2], false
			case a.Literal && strings.HasPrefix(a.Value, "-v") && len(a.Value) > 2:
				return []Word{{Value: a.Value[2:], Literal: true}}, false
			case !a.Literal && mayBeOption(a) && d == Bash:
				z.hiddenSet("printf gets the word %s, known only when it runs: it could be -v PATH", a.Value)
			}
			if !a.Literal || !strings.HasPrefix(a.Value, "-") || a.Value == "--" {
				return nil, false
			}
		}
		return nil, false
	}
	valued := varBuiltins[name]
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if !a.Literal || len(v) < 2 || v[0] != '-' && v[0] != '+' || v == "--" {
			operands = append(operands, a)
			continue
		}
		if v[0] == '-' && strings.ContainsRune(v[1:], 'n') && name != "read" && name != "unset" && name != "export" {
			nameref = true // declare -n; read -n and unset -n mean other things
		}
		if c := v[len(v)-1]; strings.IndexByte(valued, c) >= 0 && v[0] == '-' {
			i++ // the option's value, the next word
		}
	}
	return operands, nameref
}

// hiddenSet records that the commands may set a variable this analysis
// cannot name.
func (z *analyzer) hiddenSet(format string, args ...any) {
	reason := fmt.Sprintf(format, args...)
	for _, h := range z.a.HiddenSets {
		if h == reason {
			return
		}
	}
	z.a.HiddenSets = append(z.a.HiddenSets, reason)
}

// enableOpaque says what bash's enable runs out of sight: enable -f FILE
// NAME loads a builtin from a shared object, running its code, and the
// builtin then answers to NAME (ls, say) instead of the program.
func enableOpaque(args []Word) string {
	for _, a := range args[1:] {
		if !a.Literal && mayBeOption(a) {
			return fmt.Sprintf("enable gets the word %s, known only when it runs: it could be -f, which loads code", a.Value)
		}
		if a.Literal && strings.HasPrefix(a.Value, "-") && strings.Contains(a.Value, "f") {
			return "enable -f loads a builtin from a shared object, which runs its code and replaces a command name"
		}
	}
	return ""
}

// envAssignment reports whether env or sudo reads w as NAME=value: any
// word with "=" after its first byte that is not an option. The name
// need not be a shell name: env 'BASH_FUNC_ls%%=() { id; }' bash
// exports a function that replaces ls.
func envAssignment(w string) bool {
	return strings.IndexByte(w, '=') > 0 && w[0] != '-'
}
