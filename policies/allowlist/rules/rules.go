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
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/wai-dev/wai/policies/internal/plugconf"
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
	if err := plugconf.Decode(raw, &c); err != nil {
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

// SensitiveVars decide what a command name or a shell runs: a command
// that sets one is denied.
var SensitiveVars = map[string]bool{
	"PATH": true, "BASH_ENV": true, "ENV": true, "SHELLOPTS": true, "BASHOPTS": true,
	"PS4": true, "PROMPT_COMMAND": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true,
}

// Check returns whether the request may run and, when not, why.
func (a *Allowlist) Check(req Request) (allow bool, reason string) {
	switch req.Action {
	case "shell.exec", "shell.script":
	default:
		return true, "" // the allowlist is about commands
	}
	for _, k := range req.EnvKeys {
		if SensitiveVars[k] {
			return false, fmt.Sprintf("the request sets %s, which decides what a command runs", k)
		}
	}
	switch {
	case req.Action == "shell.script":
		return a.checkScript(req)
	case req.Shell != "":
		d := shellparse.POSIX
		if len(req.Command) > 0 {
			if sd, ok := shellparse.DialectOf(req.Command[0]); ok {
				d = sd
			}
		}
		return a.judge(shellparse.AnalyzeShell(req.Shell, d, req.EnvKeys...))
	default:
		return a.judge(shellparse.AnalyzeArgv(req.Command))
	}
}

// checkScript checks a script's interpreter line and, when the
// interpreter is a shell, the script's commands.
func (a *Allowlist) checkScript(req Request) (bool, string) {
	if len(req.Command) == 0 || len(strings.Fields(req.Command[0])) == 0 {
		return false, "script without an interpreter"
	}
	interp := shellparse.AnalyzeArgv(strings.Fields(req.Command[0]))
	last := interp.Runs[len(interp.Runs)-1]
	// The interpreter runs the script, which is checked below rather
	// than refused as a shell without -c.
	interp.Runs[len(interp.Runs)-1].Opaque = ""
	if ok, reason := a.judge(interp); !ok {
		return false, reason
	}
	if !shellparse.Shells[last.Name()] {
		if shellparse.IsWrapper(last.Name()) {
			return false, fmt.Sprintf("cannot tell what interpreter %q runs the script with", req.Command[0])
		}
		return true, ""
	}
	for _, w := range last.Args[1:] {
		// Shell options such as -e or -x; not -c, -s, -o, which change
		// where the commands come from or take a value.
		if len(w.Value) < 2 || w.Value[0] != '-' || strings.ContainsAny(w.Value[1:], "csoO-") {
			return false, fmt.Sprintf("cannot tell what interpreter %q runs the script with", req.Command[0])
		}
	}
	d, ok := shellparse.DialectOf(last.Name())
	if !ok {
		return false, fmt.Sprintf("the allowlist reads sh and bash scripts only, not %s", last.Name())
	}
	return a.judge(shellparse.AnalyzeShell(req.Script, d, req.EnvKeys...))
}

// judge allows an analysis when it found nothing it could not judge and
// every command that would run is listed.
func (a *Allowlist) judge(an *shellparse.Analysis) (bool, string) {
	if len(an.Problems) > 0 {
		return false, "the allowlist cannot judge this command: " + an.Problems[0].Reason
	}
	for _, v := range an.SetVars {
		if SensitiveVars[v] {
			return false, fmt.Sprintf("the command sets %s, which decides what a command runs", v)
		}
	}
	for _, r := range an.Runs {
		if reason := a.checkName(r.Args[0].Value); reason != "" {
			if r.Via != "" {
				reason += " (run by " + r.Via + ")"
			}
			return false, reason
		}
		if r.Opaque != "" {
			// Its commands come from a file or its input, which the
			// allowlist cannot read: allowing it would allow anything.
			return false, fmt.Sprintf("%s, which the allowlist cannot see: give them as %s -c '…'", r.Opaque, r.Name())
		}
	}
	return true, ""
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
