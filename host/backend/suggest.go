package backend

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// Nearest returns the candidate a misspelt name most likely meant, or ""
// when none is close enough to be a typo: for the "did you mean" of an
// error about an unknown tool, key or backend.
func Nearest(s string, candidates []string) string {
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

// unknownField matches encoding/json's error for a field the destination
// does not have.
var unknownField = regexp.MustCompile(`^json: unknown field "([^"]*)"$`)

// configAdvice rewrites a backend config's unknown-field error as the
// config key it is, with the key it most likely meant.
func configAdvice(name string, err error, v any) string {
	m := unknownField.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Sprintf("backend %s: %v", name, err)
	}
	msg := fmt.Sprintf("backend %s: unknown field %q in [backends.%s]", name, m[1], name)
	if n := Nearest(m[1], jsonNames(v)); n != "" {
		msg += fmt.Sprintf(": did you mean %q?", n)
	}
	return msg + " (wai.example.toml lists every key)"
}

// jsonNames lists the JSON names of the fields of the struct v points to.
func jsonNames(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch tag {
		case "-":
		case "":
			names = append(names, f.Name)
		default:
			names = append(names, tag)
		}
	}
	return names
}
