package shellparse

import (
	"path"
	"strings"
)

// wrapper describes a command that runs another command given as its
// arguments: the options that take a value, and how many positional
// arguments come before the wrapped command.
type wrapper struct {
	argOpts    string   // short options taking a value, e.g. "ug" for sudo -u X -g Y
	longArg    []string // long options taking a separate value
	positional int      // positional arguments before the command (timeout DURATION)
	assigns    bool     // NAME=value words may precede the command (env)
	// stringOpts run their value as a command line (env -S "cmd args"),
	// which the words do not show: following them is not possible.
	stringOpts string
	stringLong []string
}

var wrappers = map[string]wrapper{
	"sudo":    {argOpts: "ugCDhprtUT", longArg: []string{"--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type", "--other-user", "--command-timeout"}},
	"doas":    {argOpts: "uC"},
	"env":     {argOpts: "uCS", longArg: []string{"--unset", "--chdir", "--split-string"}, assigns: true, stringOpts: "S", stringLong: []string{"--split-string"}},
	"nice":    {argOpts: "n", longArg: []string{"--adjustment"}},
	"nohup":   {},
	"timeout": {argOpts: "sk", longArg: []string{"--signal", "--kill-after"}, positional: 1},
	"time":    {argOpts: "fo", longArg: []string{"--format", "--output"}},
	"command": {},
	"builtin": {},
	"exec":    {argOpts: "a"},
	"stdbuf":  {argOpts: "ioe", longArg: []string{"--input", "--output", "--error"}},
	"ionice":  {argOpts: "cnp", longArg: []string{"--class", "--classdata", "--pid"}},
	"setsid":  {},
	"xargs":   {argOpts: "adEeIiLlnPs", longArg: []string{"--arg-file", "--delimiter", "--eof", "--replace", "--max-lines", "--max-args", "--max-procs", "--max-chars"}},
	"busybox": {},
	"chroot":  {positional: 1, longArg: []string{"--userspec", "--groups"}},
}

// Base returns the command name of a word: its last path element, so
// "/bin/rm" and "rm" are the same command.
func Base(w string) string {
	if w == "" {
		return ""
	}
	return path.Base(w)
}

// IsWrapper reports whether a command name runs its arguments as another
// command (sudo, env, timeout, xargs, ...).
func IsWrapper(name string) bool {
	_, ok := wrappers[name]
	return ok
}

// Unwrap follows wrapper commands to the command they run. It returns the
// index in words of each command name met, outermost first: the wrappers,
// then the wrapped command (absent when a wrapper has nothing after it, as
// a bare `env`). ok is false when a wrapper's options could not be
// followed, so what it runs is not known.
func Unwrap(words []string) (at []int, ok bool) {
	i := 0
	for i < len(words) {
		at = append(at, i)
		w, isWrapper := wrappers[Base(words[i])]
		if !isWrapper {
			return at, true
		}
		n, good := skipWrapperArgs(w, words[i+1:])
		if !good {
			return at, false
		}
		i += 1 + n
	}
	return at, true
}

// skipWrapperArgs returns how many of args belong to the wrapper.
func skipWrapperArgs(w wrapper, args []string) (int, bool) {
	i := 0
	for i < len(args) {
		a := args[i]
		switch {
		case a == "--":
			i++
			goto positional
		case w.assigns && IsAssignment(a):
			i++
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a, "=")
			if contains(w.stringLong, name) {
				return 0, false
			}
			i++
			if !hasValue && contains(w.longArg, name) {
				if i >= len(args) {
					return 0, false
				}
				i++
			}
		case len(a) > 1 && a[0] == '-':
			i++
			// A cluster like -oL or -u0: a value option takes the rest
			// of the cluster, or the next word when it ends the cluster.
			for j := 1; j < len(a); j++ {
				if strings.IndexByte(w.stringOpts, a[j]) >= 0 {
					return 0, false
				}
				if strings.IndexByte(w.argOpts, a[j]) >= 0 {
					if j == len(a)-1 {
						if i >= len(args) {
							return 0, false
						}
						i++
					}
					break
				}
			}
		default:
			goto positional
		}
	}
positional:
	for n := 0; n < w.positional; n++ {
		if i >= len(args) {
			return 0, false
		}
		i++
	}
	return i, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Shells are the interpreters that run their -c argument, or their stdin,
// as shell code.
var Shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true,
	"ash": true, "mksh": true, "yash": true, "fish": true, "csh": true, "tcsh": true,
}

// InlineScript returns the script a shell invocation runs with -c (the
// words after a shell name), if any.
func InlineScript(args []string) (string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' && a[0] != '+' {
			return "", false // the first operand is a script file, not -c
		}
		if a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], 'c') >= 0 {
			// The script is the first operand after the options.
			for j := i + 1; j < len(args); j++ {
				if len(args[j]) > 0 && (args[j][0] == '-' || args[j][0] == '+') && args[j] != "-" {
					if args[j] == "-o" || args[j] == "+o" {
						j++ // -o takes an option name
					}
					continue
				}
				return args[j], true
			}
			return "", false
		}
		if a == "-o" || a == "+o" {
			i++
		}
	}
	return "", false
}
