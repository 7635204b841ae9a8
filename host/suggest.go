package host

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// nearest returns the candidate a misspelt name most likely meant, or ""
// when none is close enough to be a typo. The kernel computes it, not the
// CLI, so a model calling over MCP gets the same "did you mean" a person
// at the terminal does.
func nearest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if c == s {
			continue
		}
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	// A distance of a third of the name (at least 2) catches a dropped
	// letter, a swap or a wrong separator; more than that is a different
	// name, and suggesting it would mislead.
	if bestD >= 0 && bestD <= max(2, len(s)/3) {
		return best
	}
	// A name that is part of exactly one candidate ("path" for
	// "file_path") is a shortening of it.
	var part []string
	for _, c := range candidates {
		if len(s) >= 3 && c != s && strings.Contains(strings.ToLower(c), strings.ToLower(s)) {
			part = append(part, c)
		}
	}
	if len(part) == 1 {
		return part[0]
	}
	return ""
}

// didYouMean is nearest's answer as a clause to append to a message.
func didYouMean(s string, candidates []string) string {
	if n := nearest(s, candidates); n != "" {
		return "; did you mean " + quote(n) + "?"
	}
	return ""
}

func quote(s string) string { return `"` + s + `"` }

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and swaps of neighbours each cost 1, so
// "defualt" is one edit from "default".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: two back is needed for the swap.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// unknownKeyAdvice says what to do about an unknown config key: the valid
// key beside it (in the same table) it most likely meant, if one is close.
func unknownKeyAdvice(key []string) string {
	if n := configKeySuggestion(key); n != "" {
		return "did you mean " + quote(n) + "? (wai.example.toml lists every key)"
	}
	return "check its spelling against wai.example.toml, which lists every key"
}

// configKeySuggestion returns the valid key nearest an unknown one, or ""
// when nothing is close.
func configKeySuggestion(key []string) string {
	if len(key) == 0 {
		return ""
	}
	t := reflect.TypeOf(fileConfig{})
	for _, part := range key[:len(key)-1] {
		f, ok := fieldByTag(t, part)
		if !ok {
			return ""
		}
		t = f.Type
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return "" // a free-form table, such as [backends.NAME]
		}
	}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if tag := tomlName(t.Field(i)); tag != "" {
			names = append(names, tag)
		}
	}
	last := key[len(key)-1]
	n := nearest(last, names)
	if n == "" {
		return ""
	}
	full := append(append([]string{}, key[:len(key)-1]...), n)
	return strings.Join(full, ".")
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := 0; i < t.NumField(); i++ {
		if tomlName(t.Field(i)) == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

func tomlName(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if tag == "-" {
		return ""
	}
	return tag
}

// alreadyTable matches the TOML decoder's message for a table header whose
// name is already a plain key, as in backend = "podman" then
// [backend.podman].
var alreadyTable = regexp.MustCompile(`^Key '([^']+)' was already created as a hash`)

// tomlAdvice adds the likely fix to a TOML syntax error, for the two
// mistakes its own message leaves a newcomer puzzled by.
func tomlAdvice(err error) string {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return ""
	}
	if m := alreadyTable.FindStringSubmatch(pe.Message); m != nil {
		t := reflect.TypeOf(fileConfig{})
		var tables []string
		for i := 0; i < t.NumField(); i++ {
			if k := t.Field(i).Type.Kind(); k == reflect.Struct || k == reflect.Map || k == reflect.Slice && t.Field(i).Type.Elem().Kind() == reflect.Struct {
				tables = append(tables, tomlName(t.Field(i)))
			}
		}
		advice := fmt.Sprintf(" (a [%s.…] header makes %q a table, but it is a plain key", m[1], m[1])
		if n := nearest(m[1], tables); n != "" {
			advice += fmt.Sprintf("; did you mean [%s.…]?", n)
		}
		return advice + "; wai.example.toml shows every table)"
	}
	if strings.HasPrefix(pe.Message, "expected value but found") {
		return ` (TOML strings need quotes: key = "value")`
	}
	return ""
}
