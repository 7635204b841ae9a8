package rules

import (
	"fmt"
	"path"
	"strings"

	"github.com/wai-dev/wai/policies/internal/shellparse"
)

// checkCommands applies the structural rules to parsed commands, following
// sh -c and eval into the scripts they run.
func (b *Blocklist) checkCommands(cmds []shellparse.Command, depth int) string {
	if depth > shellparse.MaxDepth {
		return "commands nested too deeply to check"
	}
	for _, c := range cmds {
		words, _ := c.Words()
		if r := b.checkWords(words, depth); r != "" {
			return r
		}
		if !b.off[RuleDisk] {
			for _, rd := range c.Redirects {
				switch rd.Op {
				case ">", ">>", ">|", "&>", "&>>", "<>", ">&":
					if isBlockDevice(rd.Target) {
						return fmt.Sprintf("writes to disk device %s", rd.Target)
					}
				}
			}
		}
	}
	if !b.off[RulePipeSh] {
		if r := downloadToShell(cmds); r != "" {
			return r
		}
	}
	return ""
}

// checkWords looks at every word that names a dangerous command, not only
// the first: wrappers (sudo, env, xargs, timeout, ...) put the real
// command further along, and denying `echo rm -rf /` too is what the
// substring patterns do anyway.
func (b *Blocklist) checkWords(words []string, depth int) string {
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
		case shellparse.Shells[name]:
			if script, ok := shellparse.InlineScript(args); ok {
				r = b.checkScript(script, depth)
			}
		case name == "eval":
			r = b.checkScript(strings.Join(args, " "), depth)
		}
		if r != "" {
			return r
		}
	}
	return ""
}

func (b *Blocklist) checkScript(script string, depth int) string {
	if r := b.matchPatterns(script); r != "" {
		return r
	}
	if !b.off[RuleForkBomb] && forkBomb(script) {
		return "fork bomb"
	}
	return b.checkCommands(shellparse.Parse(script).Commands, depth+1)
}

// rmRoot denies a recursive rm of a dangerous target, or any recursive rm
// with --no-preserve-root. Options may come anywhere before "--", as GNU
// rm permutes them, and in any spelling: -rf, -fr, -r -f, -Rf, --recursive.
func rmRoot(args []string) string {
	recursive, noPreserve := false, false
	var targets []string
	opts := true
	for _, a := range args {
		switch {
		case opts && a == "--":
			opts = false
		case opts && strings.HasPrefix(a, "--"):
			if a == "--recursive" || len(a) >= 5 && strings.HasPrefix("--recursive", a) {
				recursive = true
			}
			if len(a) >= 4 && strings.HasPrefix("--no-preserve-root", a) {
				noPreserve = true
			}
		case opts && len(a) > 1 && a[0] == '-':
			if strings.ContainsAny(a[1:], "rR") {
				recursive = true
			}
		default:
			targets = append(targets, a)
		}
	}
	if !recursive {
		return ""
	}
	if noPreserve {
		return "recursive rm with --no-preserve-root"
	}
	for _, t := range targets {
		if what := dangerousTarget(t); what != "" {
			return fmt.Sprintf("recursive rm of %q (%s)", t, what)
		}
	}
	return ""
}

// recursiveOnDanger denies chmod/chown/chgrp -R over a dangerous target.
func recursiveOnDanger(name string, args []string) string {
	recursive := false
	var targets []string
	opts := true
	for _, a := range args {
		switch {
		case opts && a == "--":
			opts = false
		case opts && a == "--recursive":
			recursive = true
		case opts && strings.HasPrefix(a, "--"):
		case opts && len(a) > 1 && a[0] == '-' && strings.ContainsRune(a[1:], 'R'):
			recursive = true
		default:
			targets = append(targets, a)
		}
	}
	if !recursive {
		return ""
	}
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
	return shellparse.IsAssignment(s + "=")
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
func downloadToShell(cmds []shellparse.Command) string {
	names := make([][]string, len(cmds))
	for i, c := range cmds {
		words, _ := c.Words()
		at, _ := shellparse.Unwrap(words)
		for _, j := range at {
			names[i] = append(names[i], shellparse.Base(words[j]))
		}
	}
	for i, c := range cmds {
		dl := firstIn(names[i], downloaders)
		if dl == "" {
			continue
		}
		for j, d := range cmds {
			if d.Pipeline == c.Pipeline && d.Stage > c.Stage {
				if sh := firstIn(names[j], Interpreters); sh != "" {
					return fmt.Sprintf("a download (%s) piped into a shell (%s)", dl, sh)
				}
			}
		}
		if p := c.Parent; p >= 0 && p < len(cmds) {
			if sh := firstIn(names[p], Interpreters); sh != "" {
				return fmt.Sprintf("a download (%s) run by a shell (%s)", dl, sh)
			}
		}
	}
	return ""
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
