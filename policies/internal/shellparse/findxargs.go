package shellparse

import "strings"

// xargs returns the command xargs runs (echo when none is given). The
// words it reads from its input are appended to that command, or replace
// the -I string in its words: they arrive as words known only when it
// runs, so a command that would read them as options or code is refused
// where it reads them.
func (z *analyzer) xargs(o options, rest []Word) []Word {
	if len(rest) == 0 {
		rest = Lit("echo")
	}
	replace := ""
	if v, ok := o.short['I']; ok {
		replace = v
	}
	for _, v := range []string{o.short['i'], o.long["--replace"]} {
		if v != "" {
			replace = v
		}
	}
	if _, ok := o.short['i']; ok && replace == "" {
		replace = "{}"
	}
	if _, ok := o.long["--replace"]; ok && replace == "" {
		replace = "{}"
	}
	if replace != "" {
		return fromInput(rest, replace, false)
	}
	return append(append([]Word{}, rest...), Word{Value: "<words read by xargs>", Split: true})
}

// fromInput marks the words holding a placeholder that a command replaces
// with input it reads (xargs -I, find's {}): known only when it runs.
// split says a bare placeholder becomes several words (find -exec … +).
func fromInput(words []Word, placeholder string, split bool) []Word {
	out := make([]Word, len(words))
	for i, w := range words {
		out[i] = w
		if strings.Contains(w.Value, placeholder) {
			out[i].Literal = false
			out[i].Split = out[i].Split || split && w.Value == placeholder
		}
	}
	return out
}

// findArgs are find's primaries that take one value (-fprintf takes two).
var findArgs = map[string]int{
	"-amin": 1, "-anewer": 1, "-atime": 1, "-cmin": 1, "-cnewer": 1, "-ctime": 1,
	"-fstype": 1, "-gid": 1, "-group": 1, "-ilname": 1, "-iname": 1, "-inum": 1,
	"-ipath": 1, "-iregex": 1, "-iwholename": 1, "-links": 1, "-lname": 1,
	"-mmin": 1, "-mtime": 1, "-name": 1, "-newer": 1, "-path": 1, "-perm": 1,
	"-regex": 1, "-samefile": 1, "-size": 1, "-type": 1, "-uid": 1, "-used": 1,
	"-user": 1, "-wholename": 1, "-xtype": 1, "-context": 1, "-maxdepth": 1,
	"-mindepth": 1, "-regextype": 1, "-files0-from": 1, "-fls": 1, "-fprint": 1,
	"-fprint0": 1, "-printf": 1, "-fprintf": 2,
}

// find follows find's -exec, -execdir, -ok and -okdir commands. A word
// known only when it runs, where find reads a start path, an operator or
// an action, could be -exec itself: refused.
func (z *analyzer) find(cmd int, args []Word, d Dialect, depth int) {
	i := 1
	// Leading options: -H -L -P, -D LIST, -O LEVEL.
	for i < len(args) && args[i].Literal {
		w := args[i].Value
		if w == "-H" || w == "-L" || w == "-P" || strings.HasPrefix(w, "-O") {
			i++
			continue
		}
		if w == "-D" {
			i += 2
			continue
		}
		break
	}
	for i < len(args) {
		a := args[i]
		if a.Tilde && !a.Split && !z.sets("HOME") && isPlainTilde(a.Value) {
			i++ // ~ or ~/dir: a home directory, not an action
			continue
		}
		if !a.Literal {
			z.problem(DynamicArgs, "find gets the word %s where it reads a path or an expression, known only when it runs: it could be -exec (write the path literally)", a.Value)
			return
		}
		w := a.Value
		i++
		n, ok := findArgs[w]
		if !ok && len(w) == len("-newerXY") && strings.HasPrefix(w, "-newer") {
			n, ok = 1, true // -newermt DATE and the like
		}
		if ok {
			for k := 0; k < n && i < len(args); k++ {
				if args[i].Split {
					z.problem(DynamicArgs, "the value of find %s (%s) may become several words when it runs", w, args[i].Value)
					return
				}
				i++
			}
			continue
		}
		switch w {
		case "-exec", "-execdir", "-ok", "-okdir":
			start := i
			for i < len(args) {
				v := args[i]
				if v.Literal && (v.Value == ";" || v.Value == "+" && i > start && args[i-1].Literal && args[i-1].Value == "{}") {
					break
				}
				if !v.Literal && (v.Split || v.Fixed < 2) {
					z.problem(DynamicArgs, "find %s gets the word %s, known only when it runs: it could be ; and end the command, so what find reads after it is not known (write it literally)", w, v.Value)
					return
				}
				i++
			}
			plus := i < len(args) && args[i].Value == "+"
			inner := fromInput(args[start:i], "{}", plus)
			i++ // the terminator
			if len(inner) > 0 {
				z.run(cmd, inner, "find "+w, d, depth+1)
			}
		}
	}
}

// sets reports whether the commands seen so far set the variable.
func (z *analyzer) sets(name string) bool {
	for _, n := range z.a.SetVars {
		if n == name {
			return true
		}
	}
	return false
}

// isPlainTilde reports whether w is ~ or ~/… with no other expansion.
func isPlainTilde(w string) bool {
	return (w == "~" || strings.HasPrefix(w, "~/")) && !strings.ContainsAny(w, "$`")
}
