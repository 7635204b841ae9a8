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
