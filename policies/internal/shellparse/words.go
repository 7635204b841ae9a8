package shellparse

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// word removes quotes and escapes from a parsed word. Parts known only
// when the command runs keep their source text and clear Literal.
func (w *walker) word(x *syntax.Word) Word {
	if x == nil {
		return Word{}
	}
	out := Word{Literal: true}
	var sb strings.Builder
	for i, part := range x.Parts {
		w.part(&sb, &out, part, false, i == 0)
	}
	out.Value = sb.String()
	if out.Literal {
		out.Fixed = len(out.Value)
	}
	return out
}

func (w *walker) source(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(w.src) || start > end {
		return ""
	}
	return w.src[start:end]
}

func (w *walker) part(sb *strings.Builder, out *Word, part syntax.WordPart, quoted, first bool) {
	switch p := part.(type) {
	case *syntax.Lit:
		if quoted {
			v := unescape(p.Value, escapesDouble)
			out.Fixed += len(v)
			sb.WriteString(v)
			return
		}
		if first && strings.HasPrefix(p.Value, "~") {
			// Tilde expansion: the value is a home directory.
			out.Literal, out.Tilde = false, true
		}
		if hasGlob(p.Value) || w.d == Bash && hasBraceExpansion(p.Value) {
			out.Literal, out.Split = false, true
		}
		v := unescape(p.Value, escapesBare)
		out.Fixed += len(v)
		sb.WriteString(v)
	case *syntax.SglQuoted:
		switch {
		case !p.Dollar:
			out.Fixed += len(p.Value)
			sb.WriteString(p.Value)
		case w.d == POSIX:
			// dash has no $'…': it is a "$" followed by a quoted string.
			sb.WriteString("$" + p.Value)
		default:
			s, ok := ansiC(p.Value)
			if !ok {
				out.Literal = false
				s = w.source(p)
			}
			sb.WriteString(s)
		}
	case *syntax.DblQuoted:
		if p.Dollar && w.d == POSIX {
			// dash has no $"…": it is a "$" followed by a quoted string.
			sb.WriteByte('$')
			out.Fixed++
		}
		for _, q := range p.Parts {
			w.part(sb, out, q, true, false)
		}
	default:
		// $x, ${x…}, $(…), `…`, $((…)), <(…), extended globs, braces.
		out.Literal = false
		if !quoted {
			out.Split = true
		}
		sb.WriteString(w.source(part))
	}
}

// hasGlob reports whether an unquoted literal holds a pattern character:
// *, ? or a bracket expression [..].
func hasGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

// hasBraceExpansion reports whether bash would brace-expand an unquoted
// literal: {a,b} or {1..3}.
func hasBraceExpansion(s string) bool {
	open := strings.IndexByte(s, '{')
	return open >= 0 && strings.IndexByte(s[open:], '}') >= 0 &&
		(strings.Contains(s[open:], ",") || strings.Contains(s[open:], ".."))
}

// Backslash escapes: outside quotes a backslash escapes any byte; inside
// double quotes only these, and elsewhere there it is kept as text.
const (
	escapesBare   = ""
	escapesDouble = "$`\"\\\n"
)

// unescape removes the backslashes that escape the next byte, those in
// escapes or (escapesBare) all; a backslash-newline joins lines.
func unescape(s, escapes string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (escapes == escapesBare || strings.IndexByte(escapes, s[i+1]) >= 0) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// ansiC decodes bash's $'…' escapes; ok is false for one it does not
// know, so the word is not taken as literal.
func ansiC(s string) (string, bool) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, true
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			sb.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'a':
			sb.WriteByte('\a')
		case 'b':
			sb.WriteByte('\b')
		case 'e', 'E':
			sb.WriteByte(0x1b)
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'v':
			sb.WriteByte('\v')
		case '\\', '\'', '"', '?':
			sb.WriteByte(c)
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				return "", false
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if c == 'x' {
				sb.WriteByte(byte(v))
			} else {
				sb.WriteRune(rune(v))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			sb.WriteByte(byte(v))
			i = j - 1
		default:
			return "", false
		}
	}
	if !utf8.ValidString(sb.String()) {
		return "", false
	}
	return sb.String(), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
