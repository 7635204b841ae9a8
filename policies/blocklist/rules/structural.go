package rules

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/wai-dev/wai/policies/internal/shellparse"
)

// judge applies the structural rules to everything a command line would
// run, including the scripts of sh -c, eval and the like. It refuses what
// the parser could not judge, except a command name known only when it
// runs ($CMD, eval "$x"): the blocklist is a seatbelt that cannot be
// complete, and refusing those would refuse ordinary scripts.
func (b *Blocklist) judge(an *shellparse.Analysis) string {
	for _, p := range an.Problems {
		if p.Kind != shellparse.DynamicCommand {
			return "the blocklist cannot judge this command: " + p.Reason
		}
	}
	for _, text := range an.Scripts[min(1, len(an.Scripts)):] {
		if r := b.checkText(text); r != "" {
			return r
		}
	}
	for _, r := range an.Runs {
		words := make([]string, len(r.Args))
		for i, w := range r.Args {
			words[i] = w.Value
		}
		if reason := b.checkWords(words); reason != "" {
			return reason
		}
		if !b.off[RulePower] {
			if reason := powerCheck(r.Name(), r.Values()); reason != "" {
				return reason
			}
		}
	}
	if !b.off[RuleDisk] {
		for _, c := range an.Commands {
			for _, rd := range c.Redirects {
				switch rd.Op {
				case ">", ">>", ">|", "&>", "&>>", "<>", ">&":
					if isBlockDevice(rd.Target.Value) {
						return fmt.Sprintf("writes to disk device %s", rd.Target.Value)
					}
				}
			}
		}
	}
	if !b.off[RulePipeSh] {
		if r := downloadToShell(an); r != "" {
			return r
		}
	}
	return ""
}

// checkWords looks at every word that names a dangerous command, not only
// the first: wrappers (sudo, env, xargs, timeout, ...) put the real
// command further along, and denying `echo rm -rf /` too is what the
// substring patterns do anyway.
func (b *Blocklist) checkWords(words []string) string {
	for i, w := range words {
		name := shellparse.Base(w)
		args := words[i+1:]
		var r string
		switch {
		case name == "rm" && !b.off[RuleRmRoot]:
			r = rmRoot(args)
		case (name == "chmod" || name == "chown" || name == "chgrp") && !b.off[RuleChmod]:
			r = recursiveOnDanger(name, args)
		case isMkfs(name) && !b.off[RuleMkfs]:
			r = fmt.Sprintf("%s formats a filesystem", name)
		case name == "dd" && !b.off[RuleDD]:
			r = ddCheck(args)
		case (name == "tee" || name == "cp" || name == "shred" || name == "mv" || name == "install") && !b.off[RuleDisk]:
			for _, a := range args {
				if isBlockDevice(a) {
					r = fmt.Sprintf("%s writes to disk device %s", name, a)
					break
				}
			}
		case name == "find" && !b.off[RuleFind]:
			r = findCheck(args)
		}
		if r != "" {
			return r
		}
	}
	return ""
}

// rmRoot denies a recursive rm of a dangerous target, or any recursive rm
// with --no-preserve-root. Options come in any spelling: -rf, -fr, -r -f,
// -Rf, --recursive (or its unambiguous prefixes).
func rmRoot(args []string) string {
	long, short, targets := gnuArgs(args)
	recursive, noPreserve := false, false
	for _, a := range long {
		if a == "--recursive" || len(a) >= 5 && strings.HasPrefix("--recursive", a) {
			recursive = true
		}
		if len(a) >= 4 && strings.HasPrefix("--no-preserve-root", a) {
			noPreserve = true
		}
	}
	for _, a := range short {
		recursive = recursive || strings.ContainsAny(a[1:], "rR")
	}
	switch {
	case !recursive:
		return ""
	case noPreserve:
		return "recursive rm with --no-preserve-root"
	}
	return dangerAmong("rm", targets)
}

// recursiveOnDanger denies chmod/chown/chgrp -R over a dangerous target.
func recursiveOnDanger(name string, args []string) string {
	long, short, targets := gnuArgs(args)
	recursive := slices.Contains(long, "--recursive")
	for _, a := range short {
		recursive = recursive || strings.ContainsRune(a[1:], 'R')
	}
	if !recursive {
		return ""
	}
	return dangerAmong(name, targets)
}

// gnuArgs splits a GNU tool's arguments into long options, short option
// clusters and operands. Options may come anywhere before "--", as GNU
// tools permute them; a lone "-" is an operand.
func gnuArgs(args []string) (long, short, operands []string) {
	opts := true
	for _, a := range args {
		switch {
		case opts && a == "--":
			opts = false
		case opts && strings.HasPrefix(a, "--"):
			long = append(long, a)
		case opts && len(a) > 1 && a[0] == '-':
			short = append(short, a)
		default:
			operands = append(operands, a)
		}
	}
	return long, short, operands
}

// dangerAmong names the first dangerous target of a recursive name, or "".
func dangerAmong(name string, targets []string) string {
	for _, t := range targets {
		if what := dangerousTarget(t); what != "" {
			return fmt.Sprintf("recursive %s of %q (%s)", name, t, what)
		}
	}
	return ""
}

var systemDirs = map[string]bool{
	"/bin": true, "/boot": true, "/dev": true, "/etc": true, "/home": true,
	"/lib": true, "/lib32": true, "/lib64": true, "/libx32": true, "/media": true,
	"/mnt": true, "/opt": true, "/proc": true, "/root": true, "/run": true,
	"/sbin": true, "/snap": true, "/srv": true, "/sys": true, "/usr": true, "/var": true,
}

// dangerousTarget says what a path given to a recursive command would
// destroy, or "" when it is not one of the paths this policy guards.
func dangerousTarget(t string) string {
	if t == "" {
		return ""
	}
	// Strip trailing "/" and "*": "/*", "//", "~/", "$HOME/*" name the same
	// tree as their stem.
	h := t
	for {
		n := strings.TrimSuffix(strings.TrimSuffix(h, "*"), "/")
		if n == h {
			break
		}
		h = n
	}
	switch {
	case h == "" && strings.HasPrefix(t, "/"):
		return "the root directory"
	case strings.HasPrefix(h, "~") && !strings.Contains(h, "/"):
		return "a home directory"
	case h == "$HOME" || h == "${HOME}":
		return "the home directory"
	case h != t && isVarRef(h):
		return "the root directory when " + h + " is empty"
	}
	if !strings.HasPrefix(t, "/") {
		return ""
	}
	c := path.Clean(t)
	switch {
	case c == "/":
		return "the root directory"
	case systemDirs[c]:
		return "a system directory"
	case !strings.Contains(c[1:], "/") && strings.ContainsAny(c[1:], "*?["):
		return "top-level directories"
	}
	return ""
}

func isVarRef(s string) bool {
	if strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") {
		s = s[2 : len(s)-1]
	} else if strings.HasPrefix(s, "$") {
		s = s[1:]
	} else {
		return false
	}
	return shellparse.IsName(s)
}

func isMkfs(name string) bool {
	switch name {
	case "mkfs", "mke2fs", "mkswap", "wipefs", "mkdosfs", "mkntfs":
		return true
	}
	return strings.HasPrefix(name, "mkfs.")
}

func ddCheck(args []string) string {
	for _, a := range args {
		switch {
		case a == "if=/dev/zero" || a == "if=/dev/urandom" || a == "if=/dev/random":
			return fmt.Sprintf("dd %s (disk overwrite)", a)
		case strings.HasPrefix(a, "of=") && isBlockDevice(a[3:]):
			return fmt.Sprintf("dd writes to disk device %s", a[3:])
		}
	}
	return ""
}

// isBlockDevice reports whether p names a disk or raw memory device.
func isBlockDevice(p string) bool {
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	p = path.Clean(p)
	name, ok := strings.CutPrefix(p, "/dev/")
	if !ok {
		return false
	}
	switch name {
	case "mem", "kmem", "port":
		return true
	}
	for _, pre := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "md", "loop", "mapper/", "disk/", "sr"} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

// findCheck denies find over a dangerous start path with -delete or an
// -exec of rm.
func findCheck(args []string) string {
	var starts []string
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		starts = append(starts, a)
	}
	destructive := false
	for j := i; j < len(args); j++ {
		switch args[j] {
		case "-delete":
			destructive = true
		case "-exec", "-execdir", "-ok", "-okdir":
			if j+1 < len(args) && shellparse.Base(args[j+1]) == "rm" {
				destructive = true
			}
		}
	}
	if !destructive {
		return ""
	}
	for _, s := range starts {
		if what := dangerousTarget(s); what != "" {
			return fmt.Sprintf("find deleting under %q (%s)", s, what)
		}
	}
	return ""
}

var downloaders = map[string]bool{"curl": true, "wget": true, "fetch": true}

// downloadToShell denies a download fed to a shell: piped into it
// (curl x | sh), or substituted into its arguments (sh -c "$(curl x)",
// bash <(curl x), eval "$(wget -O- x)").
func downloadToShell(an *shellparse.Analysis) string {
	names := make([][]string, len(an.Commands))
	for _, r := range an.Runs {
		names[r.Command] = append(names[r.Command], r.Name())
	}
	for i, c := range an.Commands {
		dl := firstIn(names[i], downloaders)
		if dl == "" {
			continue
		}
		for j, d := range an.Commands {
			if sh := firstIn(names[j], Interpreters); sh != "" && laterStage(c, d) {
				return fmt.Sprintf("a download (%s) piped into a shell (%s)", dl, sh)
			}
		}
		if p := c.Parent; p >= 0 && p < len(an.Commands) {
			if sh := firstIn(names[p], Interpreters); sh != "" {
				return fmt.Sprintf("a download (%s) run by a shell (%s)", dl, sh)
			}
		}
	}
	return ""
}

// laterStage reports whether d is in a later stage of a pipeline c is in.
func laterStage(c, d shellparse.Command) bool {
	for _, sc := range c.Stages {
		for _, sd := range d.Stages {
			if sc.Pipeline == sd.Pipeline && sd.Index > sc.Index {
				return true
			}
		}
	}
	return false
}

// Interpreters run what they are fed as shell code.
var Interpreters = func() map[string]bool {
	m := map[string]bool{"eval": true, "source": true, ".": true}
	for k := range shellparse.Shells {
		m[k] = true
	}
	return m
}()

func firstIn(names []string, set map[string]bool) string {
	for _, n := range names {
		if set[n] {
			return n
		}
	}
	return ""
}

// forkBomb finds a function that pipes itself into itself in the
// background: f(){ f|f& };f, under any name, spaced any way.
func forkBomb(text string) bool {
	s := stripSpace(text)
	for off := 0; off < len(s); {
		i := strings.Index(s[off:], "(){")
		if i < 0 {
			return false
		}
		i += off
		j := i
		for j > 0 && (isNameByte(s[j-1]) || s[j-1] == ':') {
			j--
		}
		if name := s[j:i]; name != "" && strings.Contains(s[i+3:], name+"|"+name+"&") {
			return true
		}
		off = i + 3
	}
	return false
}
