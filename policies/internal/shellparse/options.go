package shellparse

import "strings"

// options is what a wrapper's command line said.
type options struct {
	rest  int             // index in args of the first word after options and operands
	short map[byte]string // short options seen, with their values
	long  map[string]string
	shell string // the value of a shellArg option, if any
	// incomplete: operands the wrapper needs are missing, so it fails.
	incomplete bool
}

// optionReader reads one wrapper's command line word by word, as its
// getopt would: i is the next word to read. Each step reports a problem
// and returns false when it cannot tell where the command starts.
type optionReader struct {
	z    *analyzer
	name string
	g    grammar
	args []Word
	i    int
	o    options
}

// parseOptions reads a wrapper's options from args (args[0] is the
// wrapper). It reports a problem and returns ok=false when it cannot
// tell where the command starts.
func (z *analyzer) parseOptions(name string, g grammar, args []Word) (o options, ok bool) {
	r := &optionReader{z: z, name: name, g: g, args: args, i: 1}
	r.o.short, r.o.long = map[byte]string{}, map[string]string{}
	if !r.options() {
		return r.o, false
	}
	ok = r.operands()
	return r.o, ok
}

// options reads the words before the first operand: options, and for
// env and sudo NAME=value words. It stops after "--" or at the first
// word that is neither.
func (r *optionReader) options() bool {
	for r.i < len(r.args) {
		a := r.args[r.i]
		if !a.Literal {
			if !r.dynamicWord(a) {
				return false
			}
			continue
		}
		switch w, g := a.Value, r.g; {
		case w == "--":
			r.i++
			return true
		case g.assigns && w == "-":
			r.i++
		case g.assigns && envAssignment(w):
			r.z.setVar(w[:strings.IndexByte(w, '=')])
			r.i++
		case g.legacyNumeric && r.i == 1 && isLegacyNumeric(w):
			r.i++
		case strings.HasPrefix(w, "--"):
			r.i++
			if !r.longOption(w) {
				return false
			}
		case len(w) > 1 && w[0] == '-':
			r.i++
			if !r.shortOptions(w) {
				return false
			}
		default:
			return true
		}
	}
	return true
}

// dynamicWord takes a word known only when it runs. Only a NAME=value
// word whose name is literal, before env's or sudo's command, cannot be
// an option.
func (r *optionReader) dynamicWord(a Word) bool {
	if r.g.assigns && !a.Split && strings.Contains(a.Value, "=") && IsName(a.Value[:strings.IndexByte(a.Value, '=')]) {
		r.z.setVar(a.Value[:strings.IndexByte(a.Value, '=')])
		r.i++
		return true
	}
	r.z.problem(DynamicArgs, "%s gets the word %s, known only when it runs: it could be an option that changes which command %s runs", r.name, a.Value, r.name)
	return false
}

// longOption records --name or --name=value, w being the whole word;
// an option with a required value and no "=" takes the next word.
func (r *optionReader) longOption(w string) bool {
	full, val, hasVal := strings.Cut(w, "=")
	opt, kind := r.g.long(full)
	switch kind {
	case "":
		r.z.problem(Unsupported, "%s: unknown or ambiguous option %s, so what it runs is not known", r.name, full)
		return false
	case "split":
		r.z.problem(Unsupported, "%s %s splits a string into a command line, which policies do not follow: give the command as separate words", r.name, full)
		return false
	case "arg":
		if !hasVal {
			v, good := r.value(opt)
			if !good {
				return false
			}
			val = v.Value
		}
	case "noarg":
		if hasVal {
			r.z.problem(Unsupported, "%s: option %s takes no value", r.name, opt)
			return false
		}
	}
	r.o.long[opt] = val
	return true
}

// shortOptions records a cluster of short options such as -abc, w being
// the whole word. The first option that takes a value ends the cluster:
// the rest of the word, or else the next word, is its value.
func (r *optionReader) shortOptions(w string) bool {
	g := r.g
	for j := 1; j < len(w); j++ {
		c := w[j]
		switch {
		case strings.IndexByte(g.noArg, c) >= 0:
			r.o.short[c] = ""
		case strings.IndexByte(g.optArg, c) >= 0:
			r.o.short[c] = w[j+1:]
			return true
		case c == g.splitArg && c != 0:
			r.z.problem(Unsupported, "%s -%c splits a string into a command line, which policies do not follow: give the command as separate words", r.name, c)
			return false
		case strings.IndexByte(g.arg, c) >= 0 || c == g.shellArg && c != 0:
			return r.shortValue(c, w[j+1:])
		default:
			r.z.problem(Unsupported, "%s: unknown option -%c, so what it runs is not known", r.name, c)
			return false
		}
	}
	return true
}

// shortValue records the short option c whose value is attached (val)
// or, when val is empty, the next word. A shellArg's value is a command
// line the wrapper runs, so it must be known now.
func (r *optionReader) shortValue(c byte, val string) bool {
	if val == "" {
		v, good := r.value("-" + string(c))
		if !good {
			return false
		}
		val = v.Value
	}
	r.o.short[c] = val
	if c == r.g.shellArg {
		if !r.args[r.i-1].Literal {
			r.z.problem(DynamicCommand, "%s -%c runs %s, known only when it runs", r.name, c, r.args[r.i-1].Value)
			return false
		}
		r.o.shell = val
	}
	return true
}

// value reads the next word as the value of the option opt. A word that
// may split could also carry the command, so it is refused.
func (r *optionReader) value(opt string) (Word, bool) {
	if r.i >= len(r.args) {
		r.z.problem(Unsupported, "%s %s needs a value", r.name, opt)
		return Word{}, false
	}
	v := r.args[r.i]
	r.i++
	if v.Split {
		r.z.problem(DynamicArgs, "the value of %s %s (%s) may become several words when it runs, so what %s runs is not known", r.name, opt, v.Value, r.name)
		return v, false
	}
	return v, true
}

// operands skips the operands the wrapper reads before its command
// (timeout's DURATION) and sets o.rest to where the command starts.
func (r *optionReader) operands() bool {
	for n := 0; n < r.g.positional; n++ {
		if r.i >= len(r.args) {
			r.o.rest, r.o.incomplete = len(r.args), true
			return true // nothing to run: the wrapper fails
		}
		if r.args[r.i].Split {
			r.z.problem(DynamicArgs, "%s gets the word %s, which may become several words when it runs, so what %s runs is not known", r.name, r.args[r.i].Value, r.name)
			return false
		}
		r.i++
	}
	r.o.rest = r.i
	return true
}

// long resolves a long option name, allowing unambiguous abbreviations
// as GNU getopt does. kind is "noarg", "arg", "optarg", "split" or "".
func (g grammar) long(name string) (full, kind string) {
	sets := []struct {
		names []string
		kind  string
	}{{g.longNoArg, "noarg"}, {g.longArg, "arg"}, {g.longOptArg, "optarg"}, {g.longSplit, "split"}}
	matches := 0
	for _, s := range sets {
		for _, n := range s.names {
			if n == name {
				return n, s.kind
			}
			if strings.HasPrefix(n, name) && len(name) > 2 {
				matches++
				full, kind = n, s.kind
			}
		}
	}
	if matches != 1 {
		return "", ""
	}
	return full, kind
}

func isLegacyNumeric(w string) bool {
	s := strings.TrimLeft(w[1:], "+-")
	if s == "" || len(w)-len(s) > 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
