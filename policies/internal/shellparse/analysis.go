package shellparse

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Dialect is the shell language a string is read in.
type Dialect int

const (
	// POSIX is /bin/sh as dash reads it (Debian's /bin/sh).
	POSIX Dialect = iota
	// Bash is GNU bash.
	Bash
)

func (d Dialect) String() string {
	if d == Bash {
		return "bash"
	}
	return "sh"
}

// DialectOf returns the dialect a shell reads, by the shell's name or
// path; ok is false for shells whose language this package does not read
// (zsh, fish, csh, ksh, …).
func DialectOf(shell string) (d Dialect, ok bool) {
	switch Base(shell) {
	case "sh", "dash":
		return POSIX, true
	case "bash":
		return Bash, true
	}
	return POSIX, false
}

// Shells are the interpreters that run their -c argument, or a file or
// their input, as shell code.
var Shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true,
	"ash": true, "mksh": true, "yash": true, "fish": true, "csh": true, "tcsh": true,
	"rbash": true, "posh": true, "busybox-sh": true,
}

// Word is one word of a command after quote removal.
type Word struct {
	// Value is the word with quotes and escapes removed; parts only known
	// when the command runs ($x, $(…), globs) keep their source text.
	Value string
	// Literal is true when Value is exactly what the command receives.
	Literal bool
	// Split is true when the word may become zero or several words when
	// it runs: an unquoted expansion, a glob or a brace expansion.
	Split bool
	// Tilde is true when the word starts with an unquoted ~, which the
	// shell replaces with a home directory.
	Tilde bool
	// Fixed counts the bytes of the value that are literal text: a
	// word that is not Literal but has Fixed > 1 cannot be a one-byte
	// operator word such as ";" when it runs.
	Fixed int
}

// Lit returns literal words.
func Lit(words ...string) []Word {
	out := make([]Word, len(words))
	for i, w := range words {
		out[i] = Word{Value: w, Literal: true, Fixed: len(w)}
	}
	return out
}

// Redirect is one redirection, such as "> /dev/sda" or "2>&1".
type Redirect struct {
	Op     string // ">", ">>", "<", "<<", "<<<", "<>", ">|", ">&", "<&", "&>", "&>>"
	Target Word
}

// Stage places a command in a pipeline: Index 0 is the first stage.
type Stage struct{ Pipeline, Index int }

// Command is one simple command as written.
type Command struct {
	Words     []Word
	Redirects []Redirect
	// Stages lists every pipeline the command sits in, innermost first
	// (a command in a brace group that is a pipeline stage is in that
	// stage).
	Stages []Stage
	// Parent is the index of the command one of whose words or
	// redirections holds this one in a command or process substitution,
	// or -1.
	Parent int
}

// Run is one command that would run: the shell's own simple commands,
// and every command a wrapper (sudo, env, xargs, find -exec, …) runs.
type Run struct {
	// Args[0] names the command.
	Args []Word
	// Command is the index of the simple command it comes from.
	Command int
	// Via names the wrapper that runs it ("" for the shell itself).
	Via string
	// Opaque, when set, says what code this run executes that no policy
	// can see: a script file, or commands read from its input.
	Opaque string
}

// Name returns the run's command name: its last path element, so
// "/bin/rm" and "rm" are the same command.
func (r Run) Name() string { return Base(r.Args[0].Value) }

// Values returns the run's arguments after the name, as text.
func (r Run) Values() []string {
	out := make([]string, len(r.Args)-1)
	for i, w := range r.Args[1:] {
		out[i] = w.Value
	}
	return out
}

// Describe renders a run for messages.
func (r Run) Describe() string {
	s := r.Name()
	if r.Via != "" {
		s = fmt.Sprintf("%s (run by %s)", s, r.Via)
	}
	return s
}

// ProblemKind classifies what the analysis could not judge.
type ProblemKind int

const (
	// Unreadable: control characters, invalid UTF-8, text the shell
	// would not parse, a shell language this package does not read,
	// nesting too deep.
	Unreadable ProblemKind = iota
	// DynamicCommand: a command name (or eval/sh -c text) known only
	// when the command runs.
	DynamicCommand
	// DynamicArgs: a wrapper's options, or a find expression, known only
	// when the command runs, so the command it runs is not known.
	DynamicArgs
	// Unsupported: constructs that change what later words mean in ways
	// this package does not follow (alias definitions, bash arithmetic
	// on variables, unknown wrapper options).
	Unsupported
)

// Problem is one thing the analysis could not judge.
type Problem struct {
	Kind   ProblemKind
	Reason string
}

// Analysis is everything a command line would run.
type Analysis struct {
	// Scripts are the texts read as shell code: the command line first,
	// then the scripts of sh -c, eval, trap, watch, ….
	Scripts  []string
	Commands []Command
	Runs     []Run
	Problems []Problem
	// SetVars are the names of shell or environment variables the
	// commands may set (assignments, env NAME=…, export, read, for),
	// and for a shell string those in Env.
	SetVars []string
	// HiddenSets say why the commands may set a variable whose name the
	// analysis cannot tell (export "$n=…", declare -n r=$x).
	HiddenSets []string
	// Env names the variables the request itself sets (its environment),
	// which Retargeted tells apart from those the commands set.
	Env []string
}

// MaxDepth bounds nested scripts (sh -c 'sh -c …') and wrappers.
const MaxDepth = 16

// AnalyzeShell analyzes a shell string read in dialect d. env names the
// variables the request itself sets: they start in SetVars, so what
// depends on them (~ depends on HOME) is not taken as known.
func AnalyzeShell(src string, d Dialect, env ...string) *Analysis {
	z := &analyzer{a: &Analysis{Commands: make([]Command, 0, 4), Runs: make([]Run, 0, 4), Env: env}}
	for _, name := range env {
		z.setVar(name)
	}
	z.shell(src, d, 0)
	return z.a
}

// AnalyzeArgv analyzes a command given as an argument vector: no shell
// reads it, so its words are all literal.
func AnalyzeArgv(argv []string) *Analysis {
	z := &analyzer{a: &Analysis{}}
	if len(argv) == 0 {
		return z.a
	}
	z.a.Commands = append(z.a.Commands, Command{Words: Lit(argv...), Parent: -1})
	z.run(0, Lit(argv...), "", POSIX, 0)
	return z.a
}

type analyzer struct {
	a         *Analysis
	pipelines int
}

func (z *analyzer) problem(kind ProblemKind, format string, args ...any) {
	reason := fmt.Sprintf(format, args...)
	for _, p := range z.a.Problems {
		if p.Reason == reason {
			return
		}
	}
	z.a.Problems = append(z.a.Problems, Problem{Kind: kind, Reason: reason})
}

func (z *analyzer) setVar(name string) {
	for _, n := range z.a.SetVars {
		if n == name {
			return
		}
	}
	z.a.SetVars = append(z.a.SetVars, name)
}

// Base returns the command name of a word: its last path element.
func Base(w string) string {
	if w == "" {
		return ""
	}
	return path.Base(w)
}

// IsName reports whether s is a shell variable name.
func IsName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch == '_' || ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}

// IsAssignment reports whether w has the form NAME=value.
func IsAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && IsName(name)
}

// badChars says why src cannot be judged by its characters, or "".
// Control characters other than tab and newline are refused before
// parsing: parsers disagree on them (mvdan reads \r as a blank where dash
// reads it as part of a word, so "a\r#…" hides the rest of the line from
// one of them), and no honest command needs them.
func badChars(src string) string {
	for i, r := range src {
		switch {
		case r == '\t' || r == '\n':
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
			return fmt.Sprintf("the command contains control character %U at byte %d: write it with printf escapes instead", r, i)
		case r == utf8.RuneError && !strings.HasPrefix(src[i:], "\uFFFD"):
			return fmt.Sprintf("the command is not valid UTF-8 at byte %d", i)
		case r == 0x2028 || r == 0x2029 || r == 0xfeff:
			return fmt.Sprintf("the command contains invisible character %U at byte %d", r, i)
		}
	}
	return ""
}

// commentContinued refuses a line that holds a # and ends in a backslash.
// sh ends a comment at the newline whatever precedes it, while mvdan
// joins backslash-newline first, so `ls #\` then `whoami` on the next
// line hides whoami in its comment (found by fuzzing against dash). The #
// may not start a comment at all (echo a#b \): refused anyway, since the
// text alone does not tell.
func commentContinued(src string) string {
	for line := 1; ; line++ {
		nl := strings.IndexByte(src, '\n')
		if nl < 0 {
			return ""
		}
		if text := src[:nl]; strings.HasSuffix(text, "\\") && strings.IndexByte(text, '#') >= 0 {
			return fmt.Sprintf("line %d holds a # and ends in a backslash: sh ends a comment at the end of the line, so the next line runs; remove the backslash or the #", line)
		}
		src = src[nl+1:]
	}
}
