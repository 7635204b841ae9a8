package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/wai-dev/wai/host/backend"
)

func quote(s string) string { return `"` + s + `"` }

// nearest is backend.Nearest, the one "did you mean" the kernel and the
// backends use too.
func nearest(s string, candidates []string) string { return backend.Nearest(s, candidates) }

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
	for _, f := range tomlFields(t) {
		if tag := tomlName(f); tag != "" {
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
	for _, f := range tomlFields(t) {
		if tomlName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// tomlFields are the fields of struct t that are keys of its table: the
// decoder reads an embedded struct's fields as the outer one's.
func tomlFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if !f.Anonymous {
			out = append(out, f)
		}
	}
	return out
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
	if m := badDuration.FindStringSubmatch(pe.Message); m != nil {
		if _, err := strconv.ParseFloat(m[1], 64); err == nil {
			// "30" is the commonest slip: a number without its unit.
			return fmt.Sprintf(` (a duration needs its unit: write "%ss" for seconds, or use "ms", "m", "h")`, m[1])
		}
		return ` (a duration is a number and its unit, such as "30s", "1m30s" or "500ms")`
	}
	return ""
}

// badDuration matches the TOML decoder's message for a duration string
// time.ParseDuration refuses.
var badDuration = regexp.MustCompile(`^invalid duration: "(.*)"$`)

// durationTypeAdvice ends the message for a duration key that is not a
// string. TOML's own type name read "not a Integer" for policy_timeout = 5;
// a number gets the string to write instead.
func durationTypeAdvice(data []byte, md toml.MetaData, k toml.Key) string {
	t := md.Type(k...)
	if t == "Integer" {
		if v, ok := valueAt(data, k); ok {
			return fmt.Sprintf(`not the bare number %v: write "%vs" for seconds, or use "ms", "m", "h"`, v, v)
		}
		return `not a bare number: give it a unit, such as "5s"`
	}
	// Other types fail decoding before this check (a duration decodes
	// from a string or an integer only); the name is a fallback.
	return "not a TOML " + strings.ToLower(t)
}

// valueAt reads the value of key k from TOML data, when every step of k
// is a table (not an array of tables).
func valueAt(data []byte, k toml.Key) (any, bool) {
	var v any = map[string]any{}
	if toml.Unmarshal(data, &v) != nil {
		return nil, false
	}
	for _, part := range k {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[part]; !ok {
			return nil, false
		}
	}
	return v, true
}
