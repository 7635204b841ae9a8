package shellparse

import (
	"strings"
)

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
