package shellparse

import (
	"fmt"
	"strings"
)

// git runs programs its command line names: configuration given with -c
// or --config-env (an alias "!cmd", core.fsmonitor, core.pager,
// core.sshCommand all run commands), and subcommand options such as
// clone --upload-pack or rebase --exec. A git run that uses one is Opaque:
// what it runs is text no policy judges as a command. What git's own
// configuration files and hooks run stays unseen: the command line does
// not show it (the allowlist's docs say so).

// gitValued are git's global options whose value is the next word when
// not attached with "=".
var gitValued = map[string]bool{
	"-C": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
	"--super-prefix": true, "--attr-source": true,
}

// gitRunner is what in a subcommand's arguments makes git run a program.
type gitRunner struct {
	long  []string // long options, matched with git's unambiguous abbreviations
	short string   // short options, anywhere in a bundle such as -qu
	words []string // literal words (submodule foreach, bisect run)
	all   bool     // the subcommand itself runs programs it is given
}

var gitRunners = map[string]gitRunner{
	"clone":         {long: []string{"--upload-pack", "--config", "--template"}, short: "uc"},
	"fetch":         {long: []string{"--upload-pack"}},
	"pull":          {long: []string{"--upload-pack"}},
	"ls-remote":     {long: []string{"--upload-pack", "--exec"}},
	"fetch-pack":    {long: []string{"--upload-pack", "--exec"}},
	"push":          {long: []string{"--receive-pack", "--exec"}},
	"send-pack":     {long: []string{"--receive-pack", "--exec"}},
	"archive":       {long: []string{"--exec"}},
	"init":          {long: []string{"--template"}},
	"rebase":        {long: []string{"--exec"}, short: "x"},
	"difftool":      {long: []string{"--extcmd"}, short: "x"},
	"grep":          {long: []string{"--open-files-in-pager"}, short: "O"},
	"send-email":    {long: []string{"--sendmail-cmd", "--smtp-server", "--to-cmd", "--cc-cmd", "--header-cmd"}},
	"daemon":        {long: []string{"--access-hook"}},
	"submodule":     {words: []string{"foreach"}},
	"bisect":        {words: []string{"run"}},
	"filter-branch": {all: true},
	"instaweb":      {all: true},
	"web--browse":   {all: true},
	"remote-ext":    {all: true},
	"for-each-repo": {all: true},
}

// gitOpaque says what a git command line runs that no policy sees, or "".
func gitOpaque(args []Word) string {
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		if !a.Literal {
			return fmt.Sprintf("git gets the word %s, known only when it runs: it could be -c, whose configuration can run any program", a.Value)
		}
		w := a.Value
		name, _, attached := strings.Cut(w, "=")
		switch {
		case w == "-c" || name == "--config-env":
			return "git " + name + " sets configuration, which can run any program (an alias \"!cmd\", core.fsmonitor, core.pager, core.sshCommand)"
		case name == "--exec-path" && attached:
			return "git --exec-path= runs git's own commands from the directory it names"
		case gitValued[name] && !attached:
			// The value is the next word, unless it splits: -C $d
			// with d="x -c alias.y=!cmd" gives git -c.
			if i++; i < len(args) && args[i].Split {
				return fmt.Sprintf("git %s gets the word %s, which may become several words when it runs: one could be -c, whose configuration can run any program", w, args[i].Value)
			}
		case !strings.HasPrefix(w, "-"):
			return gitSubcommand(w, args[i+1:])
		}
	}
	return ""
}

// gitSubcommand says what sub's arguments make git run, or "".
func gitSubcommand(sub string, args []Word) string {
	r, ok := gitRunners[sub]
	switch {
	case !ok:
		return ""
	case r.all:
		return "git " + sub + " runs the programs or shell commands it is given"
	}
	for _, a := range args {
		w := a.Value
		if !a.Literal {
			if mayBeOption(a) && (len(r.long) > 0 || r.short != "") {
				return fmt.Sprintf("git %s gets the word %s, known only when it runs: it could be an option that runs a program", sub, w)
			}
			continue
		}
		switch {
		case w == "--":
			return "" // the rest are operands, never options
		case strings.HasPrefix(w, "--"):
			name, _, _ := strings.Cut(w, "=")
			for _, l := range r.long {
				if len(name) > 2 && strings.HasPrefix(l, name) {
					return fmt.Sprintf("git %s %s runs the program or shell command it is given", sub, l)
				}
			}
		case strings.HasPrefix(w, "-") && r.short != "" && strings.ContainsAny(w[1:], r.short):
			return fmt.Sprintf("git %s %s runs the program or shell command it is given", sub, w)
		}
		for _, x := range r.words {
			if w == x {
				return fmt.Sprintf("git %s %s runs the shell command it is given", sub, x)
			}
		}
	}
	return ""
}

// mayBeOption reports whether a word known only when it runs could start
// with "-" then: its text does not start with a literal character other
// than "-" (a glob can match a file named "-Ocmd").
func mayBeOption(w Word) bool {
	return w.Value == "" || strings.ContainsRune("-$`*?[{~\\", rune(w.Value[0]))
}
