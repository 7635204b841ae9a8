// Package rules is the decision logic of the allowlist policy, in plain Go
// so the Wasm plugin (policies/allowlist) and the tests share it.
//
// A command runs only when every command it runs is on the list: argv[0],
// each simple command of a shell string (substitutions included), the
// commands wrappers such as sudo, env, xargs or timeout run, and the
// scripts of sh -c. Commands are compared by base name; a path is accepted
// only in a standard bin directory, since ./ls or /workspace/ls would be
// whatever the agent wrote there. Control flow (if, for, while, case),
// here-documents and substitutions are read, and every command in them is
// judged; a function is called by its name, which must be listed like any
// command. What the parser cannot judge (a command name that is not
// literal, text it cannot read) is denied rather than guessed at, and so is
// a listed shell run without -c, or `.`/source: their commands would come
// from a file or their input.
//
// A request that changes what names run (PATH, LD_PRELOAD, BASH_ENV, an
// EDITOR or PAGER, set in its environment or by its commands) is denied,
// and so is git with options that run programs: -c and --config-env
// (an alias "!cmd", core.fsmonitor, core.pager), --exec-path=, clone
// --upload-pack or --template, rebase --exec, submodule foreach, bisect
// run, and the like (policies/internal/shellparse, git.go).
//
// A listed program is trusted with everything it can do, and the list
// cannot see what it does: the allowlist judges command lines, not the
// code or configuration a program reads. So
//   - an interpreter runs any code: python3, node, perl, awk (system()),
//     sed (GNU's e command), make (a Makefile's recipes), sh reading a
//     file; evaluate_python sends its code to python3 on stdin, which no
//     policy sees, so listing python3 allows anything;
//   - git runs what the repository's own configuration says: an alias
//     "!cmd", hooks, core.fsmonitor or core.pager written into .git/config
//     by the file tools, by echo >> or by git config itself run on the
//     next plain `git status`; listing git lets the workspace's
//     repository configuration run programs;
//   - find -exec and xargs are followed, but the commands they run must be
//     listed too; a copy of a program is judged by its new name, and a
//     path outside the system bin directories (./c) is refused.
//
// List what the agent needs, not more; policies/testdata/corpus.json has
// a "gap" row for each of these.
package rules

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/wai-dev/wai/policies/internal/plugconf"
	"github.com/wai-dev/wai/policies/internal/shellparse"
)

// Config is the policy's configuration ([[policies]] config = {…}).
type Config struct {
	// Commands are the base names allowed to run, e.g. ["ls", "git"].
	Commands []string `json:"commands"`
	// Ask, when true (the default), asks a person to approve a command
	// whose only fault is a name not on the list; the kernel denies it
	// when nobody can be asked. False denies it outright.
	Ask *bool `json:"ask"`
}

// ParseConfig decodes a JSON config strictly.
func ParseConfig(raw []byte) (Config, error) {
	var c Config
	if err := plugconf.Decode(raw, &c); err != nil {
		return c, fmt.Errorf("allowlist config: %v (keys: commands, ask)", err)
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
	ask     bool
}

// Verdict is the allowlist's answer: allow, deny, or ask a person.
type Verdict struct {
	Allow bool
	// Ask: every command is judged, and the only fault is names not on
	// the list, which a person may approve. Reason says which.
	Ask    bool
	Reason string
}

// ConfigKey is the config key that allows a command without asking.
const ConfigKey = "commands"

// New builds an allowlist. An empty list is valid and denies every
// command.
func New(c Config) (*Allowlist, error) {
	a := &Allowlist{allowed: map[string]bool{}, ask: c.Ask == nil || *c.Ask}
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
	return slices.Sorted(maps.Keys(a.allowed))
}

var binDirs = map[string]bool{
	"/bin": true, "/usr/bin": true, "/usr/local/bin": true,
	"/sbin": true, "/usr/sbin": true, "/usr/local/sbin": true,
}

// Check returns whether the request may run and, when not, why. A
// request a person could approve (Judge's Ask) is not allowed.
func (a *Allowlist) Check(req Request) (allow bool, reason string) {
	v := a.Judge(req)
	return v.Allow, v.Reason
}

// Judge decides a request: allow, deny, or (for commands that are only
// missing from the list, when the config asks) ask a person.
func (a *Allowlist) Judge(req Request) Verdict {
	switch req.Action {
	case "shell.exec", "shell.script":
	default:
		return Verdict{Allow: true} // the allowlist is about commands
	}
	// Before the script's interpreter is known: python3 reads no
	// shell, yet PATH in its environment still picks which python3.
	if why := shellparse.EnvRunVar(req.EnvKeys); why != "" {
		return deny("%s", why)
	}
	if req.Action == "shell.script" {
		return a.checkScript(req)
	}
	return a.judge(shellparse.AnalyzeRequest(req.Command, req.Shell, req.EnvKeys...))
}

func deny(format string, args ...any) Verdict {
	return Verdict{Reason: fmt.Sprintf(format, args...)}
}

// checkScript checks a script's interpreter line and, when the
// interpreter is a shell, the script's commands.
func (a *Allowlist) checkScript(req Request) Verdict {
	if len(req.Command) == 0 {
		return deny("script without an interpreter")
	}
	// last reads the script, which is checked below rather than
	// refused as a shell without -c.
	interp, last := shellparse.AnalyzeInterpreter(req.Command[0])
	if last == nil {
		return deny("script without an interpreter")
	}
	iv := a.judge(interp)
	if !iv.Allow && !iv.Ask {
		return iv
	}
	if !shellparse.Shells[last.Name()] {
		if shellparse.IsWrapper(last.Name()) {
			return deny("cannot tell what interpreter %q runs the script with", req.Command[0])
		}
		return iv
	}
	for _, w := range last.Args[1:] {
		// Shell options such as -e or -x; not -c, -s, -o, which change
		// where the commands come from or take a value.
		if len(w.Value) < 2 || w.Value[0] != '-' || strings.ContainsAny(w.Value[1:], "csoO-") {
			return deny("cannot tell what interpreter %q runs the script with", req.Command[0])
		}
	}
	d, ok := shellparse.DialectOf(last.Name())
	if !ok {
		return deny("the allowlist reads sh and bash scripts only, not %s", last.Name())
	}
	sv := a.judge(shellparse.AnalyzeShell(req.Script, d, req.EnvKeys...))
	if sv.Ask && iv.Ask {
		sv.Reason = iv.Reason + "; " + sv.Reason
	} else if iv.Ask && sv.Allow {
		return iv
	}
	return sv
}

// judge allows an analysis when it found nothing it could not judge and
// every command that would run is listed. When the only fault is names
// not on the list, and the config asks, it asks a person.
func (a *Allowlist) judge(an *shellparse.Analysis) Verdict {
	if len(an.Problems) > 0 {
		return deny("the allowlist cannot judge this command: %s", an.Problems[0].Reason)
	}
	if why := an.Retargeted(); why != "" {
		return deny("%s", why)
	}
	var unlisted []string
	for _, r := range an.Runs {
		reason, onlyUnlisted := a.checkName(r.Args[0].Value)
		if reason != "" {
			if r.Via != "" {
				reason += " (run by " + r.Via + ")"
			}
			if !onlyUnlisted || !a.ask {
				return Verdict{Reason: reason}
			}
			unlisted = append(unlisted, reason)
		}
		switch {
		case r.Opaque != "" && r.Name() == "git":
			// What git's configuration or options run is text, not a
			// command the allowlist judges.
			return deny("%s; the allowlist cannot see what that runs: write git's options literally, without -c, --config-env or options that name a program (--upload-pack, --exec, …), and run such a command on its own", r.Opaque)
		case r.Opaque != "":
			// Its commands come from a file or its input, which the
			// allowlist cannot read: allowing it would allow anything.
			return deny("%s, which the allowlist cannot see: %s", r.Opaque, opaqueAdvice(r.Name()))
		}
	}
	if len(unlisted) > 0 {
		return Verdict{Ask: true, Reason: strings.Join(unlisted, "; ")}
	}
	return Verdict{Allow: true}
}

// opaqueAdvice says how to give the allowlist commands it can see instead
// of a file or an input: a shell takes them with -c; `.`, source and
// chroot have no -c, so their commands are given directly.
func opaqueAdvice(name string) string {
	switch name {
	case ".", "source", "chroot":
		return "give the commands themselves (or as sh -c '…')"
	}
	return "give them as " + name + " -c '…'"
}

// checkName checks one command word; onlyUnlisted reports that its one
// fault is a name missing from the list.
func (a *Allowlist) checkName(w string) (reason string, onlyUnlisted bool) {
	base := shellparse.Base(w)
	if strings.Contains(w, "/") {
		if !strings.HasPrefix(w, "/") || !binDirs[path.Dir(path.Clean(w))] {
			return fmt.Sprintf("%q runs a program by path outside the system bin directories", w), false
		}
	}
	if !a.allowed[base] {
		return fmt.Sprintf("%q is not in the allowlist", base), true
	}
	return "", false
}
