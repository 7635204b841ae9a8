// Package rules is the decision logic of the allowlist policy, in plain Go
// so the Wasm plugin (policies/allowlist) and the tests share it.
//
// A command runs only when every command it runs is on the list: argv[0],
// each simple command of a shell string (substitutions included), the
// commands wrappers such as sudo, env, xargs or timeout run, and the
// scripts of sh -c. Commands are compared by base name; a path is accepted
// only in a standard bin directory, since ./ls or /workspace/ls would be
// whatever the agent wrote there. A shell string the parser cannot read
// simply (control flow, functions, here-documents, a command name that is
// not literal) is denied rather than guessed at, and so is a listed shell
// run without -c: its commands would come from a file or its input.
//
// A listed program is trusted with everything it can do: python3 runs any
// code, git can run hooks and pagers. List what the agent needs, not more.
package rules

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/wai-dev/wai/policies/internal/shellparse"
)

// Config is the policy's configuration ([[policies]] config = {…}).
type Config struct {
	// Commands are the base names allowed to run, e.g. ["ls", "git"].
	Commands []string `json:"commands"`
}

// ParseConfig decodes a JSON config strictly.
func ParseConfig(raw []byte) (Config, error) {
	var c Config
	if len(raw) == 0 || string(raw) == "null" {
		return c, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("allowlist config: %v (keys: commands)", err)
	}
	return c, nil
}

// Request is the part of a policy check the allowlist looks at.
type Request struct {
	Action  string
	Command []string // argv (["/bin/sh","-c",Shell] for a shell string), or a script's interpreter
	Shell   string   // the shell string of shell.exec, if any
	Script  string   // the text of shell.script
	EnvKeys []string
}

// Allowlist decides requests. It is immutable and safe for concurrent use.
type Allowlist struct {
	allowed map[string]bool
}

// New builds an allowlist. An empty list is valid and denies every
// command.
func New(c Config) (*Allowlist, error) {
	a := &Allowlist{allowed: map[string]bool{}}
	for _, n := range c.Commands {
		if n == "" || strings.ContainsAny(n, "/ \t\n\x00") {
			return nil, fmt.Errorf("allowlist config: %q is not a command name (give base names such as \"ls\")", n)
		}
		a.allowed[n] = true
	}
	return a, nil
}

// Commands lists the allowed commands, sorted.
func (a *Allowlist) Commands() []string {
	out := make([]string, 0, len(a.allowed))
	for n := range a.allowed {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

var binDirs = map[string]bool{
	"/bin": true, "/usr/bin": true, "/usr/local/bin": true,
	"/sbin": true, "/usr/sbin": true, "/usr/local/sbin": true,
}

// Check returns whether the request may run and, when not, why.
func (a *Allowlist) Check(req Request) (allow bool, reason string) {
	switch req.Action {
	case "shell.exec", "shell.script":
	default:
		return true, "" // the allowlist is about commands
	}
	for _, k := range req.EnvKeys {
		if k == "PATH" {
			return false, "the request sets PATH, which decides what a command name runs"
		}
	}
	if req.Action == "shell.script" {
		if len(req.Command) == 0 {
			return false, "script without an interpreter"
		}
		interp := strings.Fields(req.Command[0])
		if len(interp) == 0 {
			return false, "script without an interpreter"
		}
		// The interpreter runs the script, which is checked below, so
		// only its names are: not the rule against a shell without -c.
		at, ok := shellparse.Unwrap(interp)
		for _, i := range at {
			if r := a.checkName(interp[i]); r != "" {
				return false, r
			}
		}
		if !ok {
			return false, fmt.Sprintf("cannot tell which interpreter %q runs", req.Command[0])
		}
		if shellparse.Shells[shellparse.Base(interp[at[len(at)-1]])] {
			if r := a.checkShell(req.Script, 0); r != "" {
				return false, r
			}
		}
		return true, ""
	}
	if req.Shell != "" {
		if r := a.checkShell(req.Shell, 0); r != "" {
			return false, r
		}
		return true, ""
	}
	if r := a.checkWords(req.Command, allLiteral(len(req.Command)), 0); r != "" {
		return false, r
	}
	return true, ""
}

func allLiteral(n int) []bool {
	l := make([]bool, n)
	for i := range l {
		l[i] = true
	}
	return l
}

func (a *Allowlist) checkShell(s string, depth int) string {
	if depth > shellparse.MaxDepth {
		return "commands nested too deeply to check"
	}
	sc := shellparse.Parse(s)
	if len(sc.Complex) > 0 {
		return fmt.Sprintf("the shell string uses %s, which the allowlist cannot follow: run simple commands", sc.Complex[0])
	}
	for _, c := range sc.Commands {
		for _, w := range c.Args {
			if shellparse.IsAssignment(w) && strings.HasPrefix(w, "PATH=") {
				return "the command sets PATH, which decides what a command name runs"
			}
			if !shellparse.IsAssignment(w) {
				break
			}
		}
		words, lits := c.Words()
		if len(words) == 0 {
			continue // assignments or redirections only
		}
		if r := a.checkWords(words, lits, depth); r != "" {
			return r
		}
	}
	return ""
}

// checkWords checks one simple command: its name, the commands its
// wrappers run, and what find -exec and sh -c run.
func (a *Allowlist) checkWords(words []string, lits []bool, depth int) string {
	if len(words) == 0 {
		return ""
	}
	at, ok := shellparse.Unwrap(words)
	for _, i := range at {
		if !lits[i] {
			return fmt.Sprintf("command name %q is not literal: the allowlist cannot tell what it runs", words[i])
		}
		if r := a.checkName(words[i]); r != "" {
			return r
		}
	}
	last := at[len(at)-1]
	if !ok {
		return fmt.Sprintf("cannot tell which command %s runs", shellparse.Base(words[last]))
	}
	cmd := words[last:]
	name := shellparse.Base(cmd[0])
	switch {
	case shellparse.Shells[name]:
		script, ok := shellparse.InlineScript(cmd[1:])
		if !ok {
			// Its commands come from a file or its input, which the
			// allowlist cannot read: allowing it would allow anything.
			return fmt.Sprintf("%s without -c runs commands the allowlist cannot see (a file or its input): give them as %s -c '…'", name, name)
		}
		return a.checkShell(script, depth+1)
	case name == "eval":
		return a.checkShell(strings.Join(cmd[1:], " "), depth+1)
	case name == "find":
		for j := 1; j < len(cmd); j++ {
			switch cmd[j] {
			case "-exec", "-execdir", "-ok", "-okdir":
				var inner []string
				for _, w := range cmd[j+1:] {
					if w == ";" || w == "+" {
						break
					}
					inner = append(inner, w)
				}
				if len(inner) == 0 {
					return "find " + cmd[j] + " without a command"
				}
				if r := a.checkWords(inner, allLiteral(len(inner)), depth+1); r != "" {
					return r
				}
			}
		}
	}
	return ""
}

// checkName checks one command word.
func (a *Allowlist) checkName(w string) string {
	base := shellparse.Base(w)
	if strings.Contains(w, "/") {
		if !strings.HasPrefix(w, "/") || !binDirs[path.Dir(path.Clean(w))] {
			return fmt.Sprintf("%q runs a program by path outside the system bin directories", w)
		}
	}
	if !a.allowed[base] {
		return fmt.Sprintf("%q is not in the allowlist", base)
	}
	return ""
}
