// Package shellparse reads a POSIX shell string well enough for a policy to
// see which commands it runs: simple commands with their words (quotes
// removed), redirections, pipelines, and the commands inside $(…), `…`,
// <(…) and >(…).
//
// It is deliberately not a shell. Constructs it does not follow exactly
// (control flow, functions, here-documents, arithmetic, unterminated
// quotes) are recorded in Script.Complex, and the parse carries on as best
// it can: a blocklist still scans everything it found, while an allowlist
// refuses a script it could not read simply. Both directions fail closed.
package shellparse

import (
	"strings"
)

// Command is one simple command.
type Command struct {
	// Args are the words, quotes and escapes removed. Leading assignments
	// (NAME=value) are kept; see Words.
	Args []string
	// Literal[i] is false when Args[i] holds an expansion ($VAR, $(…),
	// `…`) or an unquoted glob, so its value is not known before running.
	Literal   []bool
	Redirects []Redirect
	// Pipeline identifies the pipeline (commands joined by |); Stage is
	// the position in it, 0 first.
	Pipeline int
	Stage    int
	// Parent is the index of the command one of whose words contains this
	// one as a substitution, or -1.
	Parent int
}

// Redirect is one redirection, such as "> /dev/sda" or "2>&1".
type Redirect struct {
	Op     string // ">", ">>", "<", "<<", "<<<", "<>", ">|", ">&", "<&", "&>", "&>>"
	Target string
}

// Script is a parsed shell string.
type Script struct {
	Commands []Command
	// Complex lists the constructs that a simple reading cannot follow,
	// once each, in the order met.
	Complex []string
}

// MaxDepth bounds nested substitutions.
const MaxDepth = 16

// Parse reads s. It never fails: what it cannot follow goes to Complex.
func Parse(s string) Script {
	var out Script
	p := &parser{out: &out}
	p.parse(s, -1, 0)
	return out
}

type parser struct {
	out       *Script
	pipelines int
}

func (p *parser) complex(what string) {
	for _, c := range p.out.Complex {
		if c == what {
			return
		}
	}
	p.out.Complex = append(p.out.Complex, what)
}

// keywords that start or end compound commands. At command position they
// make a script complex; the parse skips them so the commands they
// surround are still seen.
var keywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true,
	"for": true, "while": true, "until": true, "do": true, "done": true,
	"case": true, "esac": true, "select": true, "function": true,
	"[[": true, "]]": true, "coproc": true,
}

// cmdState accumulates one simple command.
type cmdState struct {
	args     []string
	literal  []bool
	redirs   []Redirect
	subs     []string // substitution bodies met in this command's words
	word     strings.Builder
	inWord   bool
	wordLit  bool
	redirOp  string // pending redirection waiting for its target
	pipeline int
	stage    int
}

func (c *cmdState) startWord() {
	if !c.inWord {
		c.inWord, c.wordLit = true, true
	}
}

func (p *parser) parse(s string, parent, depth int) {
	if depth > MaxDepth {
		p.complex("substitutions nested too deeply")
		return
	}
	c := &cmdState{pipeline: p.newPipeline()}
	endWord := func() {
		if !c.inWord {
			return
		}
		w := c.word.String()
		c.word.Reset()
		c.inWord = false
		if c.redirOp != "" {
			c.redirs = append(c.redirs, Redirect{Op: c.redirOp, Target: w})
			c.redirOp = ""
			return
		}
		if len(c.args) == 0 && c.wordLit {
			switch {
			case keywords[w]:
				p.complex("shell keyword " + w)
				return
			case w == "{" || w == "}" || w == "!":
				return // grouping and negation change no command
			}
		}
		c.args = append(c.args, w)
		c.literal = append(c.literal, c.wordLit)
	}
	endCommand := func(newPipeline bool) {
		endWord()
		if c.redirOp != "" {
			p.complex("redirection without a target")
			c.redirOp = ""
		}
		idx := parent
		if len(c.args) > 0 || len(c.redirs) > 0 {
			idx = len(p.out.Commands)
			p.out.Commands = append(p.out.Commands, Command{
				Args: c.args, Literal: c.literal, Redirects: c.redirs,
				Pipeline: c.pipeline, Stage: c.stage, Parent: parent,
			})
		}
		subs := c.subs
		c.args, c.literal, c.redirs, c.subs = nil, nil, nil, nil
		if newPipeline {
			c.pipeline, c.stage = p.newPipeline(), 0
		} else {
			c.stage++
		}
		for _, sub := range subs {
			p.parse(sub, idx, depth+1)
		}
	}

	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r':
			endWord()
		case ch == '\n' || ch == ';':
			if ch == ';' && i+1 < len(s) && s[i+1] == ';' {
				i++ // ";;" ends a case arm
			}
			endCommand(true)
		case ch == '&':
			switch {
			case i+1 < len(s) && s[i+1] == '&':
				i++
				endCommand(true)
			case i+1 < len(s) && s[i+1] == '>':
				endWord()
				i++
				op := "&>"
				if i+1 < len(s) && s[i+1] == '>' {
					i++
					op = "&>>"
				}
				c.redirOp = op
			default:
				endCommand(true)
			}
		case ch == '|':
			switch {
			case i+1 < len(s) && s[i+1] == '|':
				i++
				endCommand(true)
			case i+1 < len(s) && s[i+1] == '&':
				i++
				endCommand(false)
			default:
				endCommand(false)
			}
		case ch == '(' && !c.inWord:
			if i+1 < len(s) && s[i+1] == ')' {
				p.complex("function definition")
				i++
			}
			endCommand(true)
		case ch == '(':
			// "name(" inside a word: a function definition such as f(){…}.
			if i+1 < len(s) && s[i+1] == ')' {
				p.complex("function definition")
				endWord()
				i++
				endCommand(true)
				continue
			}
			c.startWord()
			c.word.WriteByte(ch)
			c.wordLit = false
		case ch == ')':
			endCommand(true)
		case ch == '<' || ch == '>':
			if i+1 < len(s) && s[i+1] == '(' { // process substitution
				body, n, ok := matchParen(s, i+2)
				if !ok {
					p.complex("unterminated process substitution")
				}
				c.startWord()
				c.word.WriteString(s[i:min(i+3+n, len(s))])
				c.wordLit = false
				c.subs = append(c.subs, body)
				i += 1 + n
				if ok {
					i++
				}
				continue
			}
			// A word of digits right before the operator is its fd.
			fd := c.inWord && c.wordLit && isDigits(c.word.String())
			if fd {
				c.word.Reset()
				c.inWord = false
			} else {
				endWord()
			}
			op, n := redirOp(s[i:])
			if op == "<<" || op == "<<-" {
				p.complex("here-document")
			}
			c.redirOp = op
			i += n - 1
		case ch == '#' && !c.inWord:
			for i < len(s) && s[i] != '\n' {
				i++
			}
			i-- // let the newline end the command
		case ch == '\\':
			c.startWord()
			if i+1 < len(s) {
				i++
				if s[i] != '\n' { // backslash-newline joins lines
					c.word.WriteByte(s[i])
				}
			}
		case ch == '\'':
			c.startWord()
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				p.complex("unterminated quote")
				c.word.WriteString(s[i+1:])
				i = len(s)
				continue
			}
			c.word.WriteString(s[i+1 : i+1+j])
			i += 1 + j
		case ch == '"':
			c.startWord()
			i = p.doubleQuoted(s, i+1, c) - 1
		case ch == '$' || ch == '`':
			c.startWord()
			i = p.expansion(s, i, c, false) - 1
		default:
			c.startWord()
			if ch == '*' || ch == '?' || ch == '[' {
				c.wordLit = false
			}
			c.word.WriteByte(ch)
		}
	}
	endCommand(true)
}

// doubleQuoted reads a "…" body starting at i (after the quote) and
// returns the index after the closing quote.
func (p *parser) doubleQuoted(s string, i int, c *cmdState) int {
	for i < len(s) {
		ch := s[i]
		switch ch {
		case '"':
			return i + 1
		case '\\':
			if i+1 < len(s) && strings.IndexByte("\\\"$`\n", s[i+1]) >= 0 {
				if s[i+1] != '\n' {
					c.word.WriteByte(s[i+1])
				}
				i += 2
				continue
			}
			c.word.WriteByte(ch)
			i++
		case '$', '`':
			i = p.expansion(s, i, c, true)
		default:
			c.word.WriteByte(ch)
			i++
		}
	}
	p.complex("unterminated quote")
	return i
}

// expansion reads $…, ${…}, $(…), $((…)) or `…` at i, writes its text to
// the word, queues command substitutions, and returns the index after it.
func (p *parser) expansion(s string, i int, c *cmdState, quoted bool) int {
	if s[i] == '`' {
		j := i + 1
		for j < len(s) && s[j] != '`' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			p.complex("unterminated backquote")
			j = len(s)
		}
		body := s[i+1 : min(j, len(s))]
		c.word.WriteString(s[i:min(j+1, len(s))])
		c.wordLit = false
		c.subs = append(c.subs, strings.ReplaceAll(body, "\\`", "`"))
		return j + 1
	}
	// s[i] == '$'
	if i+1 >= len(s) {
		c.word.WriteByte('$')
		return i + 1
	}
	switch next := s[i+1]; {
	case next == '(' && i+2 < len(s) && s[i+2] == '(':
		p.complex("arithmetic expansion")
		body, n, ok := matchParen(s, i+2)
		if !ok {
			p.complex("unterminated substitution")
		}
		c.word.WriteString(s[i:min(i+3+n, len(s))])
		c.wordLit = false
		c.subs = append(c.subs, strings.Trim(body, "()"))
		if ok {
			return i + 3 + n
		}
		return len(s)
	case next == '(':
		body, n, ok := matchParen(s, i+2)
		if !ok {
			p.complex("unterminated substitution")
		}
		c.word.WriteString(s[i:min(i+3+n, len(s))])
		c.wordLit = false
		c.subs = append(c.subs, body)
		if ok {
			return i + 3 + n
		}
		return len(s)
	case next == '{':
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			p.complex("unterminated ${")
			c.word.WriteString(s[i:])
			c.wordLit = false
			return len(s)
		}
		inner := s[i+2 : i+2+j]
		if strings.ContainsAny(inner, "$`(") {
			p.complex("nested parameter expansion")
		}
		c.word.WriteString(s[i : i+3+j])
		c.wordLit = false
		return i + 3 + j
	case next == '_' || next >= 'A' && next <= 'Z' || next >= 'a' && next <= 'z':
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		c.word.WriteString(s[i:j])
		c.wordLit = false
		return j
	case strings.IndexByte("0123456789@*#?$!-", next) >= 0:
		c.word.WriteString(s[i : i+2])
		c.wordLit = false
		return i + 2
	case next == '\'' && !quoted:
		// $'…' ANSI-C quoting: escapes we do not decode.
		p.complex("$'…' quoting")
		c.wordLit = false
		c.word.WriteByte('$')
		return i + 1
	}
	c.word.WriteByte('$')
	return i + 1
}

// matchParen finds the ')' closing a group whose body starts at i,
// honouring nesting and quotes. It returns the body, its length, and
// whether the group was closed.
func matchParen(s string, i int) (body string, n int, ok bool) {
	depth := 1
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '\'':
			k := strings.IndexByte(s[j+1:], '\'')
			if k < 0 {
				return s[i:], len(s) - i, false
			}
			j += 1 + k
		case '"':
			for j++; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return s[i:j], j - i, true
			}
		}
	}
	return s[i:], len(s) - i, false
}

func redirOp(s string) (string, int) {
	for _, op := range []string{"<<<", "<<-", "&>>", ">>", "<<", "<>", ">|", ">&", "<&", ">", "<"} {
		if strings.HasPrefix(s, op) {
			return op, len(op)
		}
	}
	return s[:1], 1
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (p *parser) newPipeline() int {
	p.pipelines++
	return p.pipelines
}

// Words returns the command's words without its leading NAME=value
// assignments, and whether each is literal.
func (c Command) Words() ([]string, []bool) {
	i := 0
	for i < len(c.Args) && IsAssignment(c.Args[i]) {
		i++
	}
	return c.Args[i:], c.Literal[i:]
}

// IsAssignment reports whether w has the form NAME=value.
func IsAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		ch := w[i]
		if !(ch == '_' || ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}
