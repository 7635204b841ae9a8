package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// paramsProblem explains why params failed a tool's schema the way a
// caller fixes it: which field (a JSON pointer), what is wrong with it
// (missing, not a field of the tool, the wrong type), and what the tool
// takes. The validator's own message names a schema path and a Go type,
// which says what failed but not what to send instead; it is kept for the
// checks this walk does not explain (minimum, enum, pattern, …).
func paramsProblem(tool string, s *jsonschema.Schema, v any, verr error) string {
	why := explain(s, v, "")
	if why == "" {
		why = schemaError(verr)
	}
	if sig := signature(s); sig != "" {
		why += "; " + tool + " takes " + sig
	}
	return why
}

// explain returns the first problem it finds with v against s, or "".
func explain(s *jsonschema.Schema, v any, ptr string) string {
	if s == nil {
		return ""
	}
	if want := schemaTypes(s); len(want) > 0 && !slicesHasType(want, v) {
		return fmt.Sprintf("%s: want %s, got %s", fieldName(ptr), strings.Join(want, " or "), describeValue(v))
	}
	if len(s.Enum) > 0 && !inEnum(s.Enum, v) {
		return fmt.Sprintf("%s: want %s, got %s", fieldName(ptr), typeName(s), describeValue(v))
	}
	switch x := v.(type) {
	case map[string]any:
		// Unknown fields first: a misspelt field is also a missing one,
		// and its "did you mean" is the better message.
		if forbidsExtra(s) && len(s.PatternProperties) == 0 {
			whose := "this tool"
			if ptr != "" {
				whose = ptr
			}
			for _, name := range slices.Sorted(maps.Keys(x)) {
				if _, known := s.Properties[name]; !known {
					return fmt.Sprintf("%s is not a field of %s%s", fieldName(ptr+"/"+escapePtr(name)), whose, didYouMean(name, slices.Sorted(maps.Keys(s.Properties))))
				}
			}
		}
		for _, name := range s.Required {
			if _, ok := x[name]; !ok {
				return fmt.Sprintf("required %s is missing", fieldName(ptr+"/"+escapePtr(name)))
			}
		}
		for _, name := range slices.Sorted(maps.Keys(x)) {
			if p := explain(s.Properties[name], x[name], ptr+"/"+escapePtr(name)); p != "" {
				return p
			}
		}
	case []any:
		for i, item := range x {
			if p := explain(s.Items, item, ptr+"/"+strconv.Itoa(i)); p != "" {
				return p
			}
		}
	}
	return ""
}

func inEnum(enum []any, v any) bool {
	got, err := json.Marshal(v)
	if err != nil {
		return false
	}
	for _, e := range enum {
		if b, err := json.Marshal(e); err == nil && string(b) == string(got) {
			return true
		}
	}
	return false
}

// fieldName renders a JSON pointer for a message; the root is "params".
func fieldName(ptr string) string {
	if ptr == "" {
		return "params"
	}
	return "field " + ptr
}

func escapePtr(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func schemaTypes(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

func slicesHasType(want []string, v any) bool {
	got := jsonType(v)
	for _, w := range want {
		if w == got || w == "number" && got == "integer" {
			return true
		}
	}
	return false
}

// jsonType names v's JSON type, telling whole numbers ("integer") from
// others.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// describeValue is v's type with a short rendering of it, so the caller
// sees which value was meant.
func describeValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return jsonType(v)
	}
	s := string(b)
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return jsonType(v) + " " + s
}

// forbidsExtra reports additionalProperties: false, which the schema
// package holds as {"not": {}}.
func forbidsExtra(s *jsonschema.Schema) bool {
	ap := s.AdditionalProperties
	return ap != nil && ap.Not != nil && reflect.ValueOf(*ap.Not).IsZero()
}

// signature renders an object schema's fields for a message:
// {"command": array of string (required), "cwd": string}.
func signature(s *jsonschema.Schema) string {
	if s == nil || len(s.Properties) == 0 {
		return ""
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	names := slices.Sorted(maps.Keys(s.Properties))
	// Required fields first: they are what a failing call most often lacks.
	sort.SliceStable(names, func(i, j int) bool { return required[names[i]] && !required[names[j]] })
	var parts []string
	for _, n := range names {
		p := quote(n) + ": " + typeName(s.Properties[n])
		if required[n] {
			p += " (required)"
		}
		parts = append(parts, p)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func typeName(s *jsonschema.Schema) string {
	if s == nil {
		return "any"
	}
	if len(s.Enum) > 0 {
		var vs []string
		for _, e := range s.Enum {
			b, _ := json.Marshal(e)
			vs = append(vs, string(b))
		}
		return "one of " + strings.Join(vs, ", ")
	}
	t := strings.Join(schemaTypes(s), " or ")
	if t == "" {
		t = "any"
	}
	if t == "array" && s.Items != nil && len(schemaTypes(s.Items)) > 0 {
		t += " of " + strings.Join(schemaTypes(s.Items), " or ")
	}
	return t
}

// jsonProblem explains a JSON syntax error with where it is: the byte
// (counting from 1) and the text up to it.
func jsonProblem(data []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err.Error()
	}
	at := int(se.Offset)
	from := max(0, at-20)
	return fmt.Sprintf("%v at byte %d: %s <-- here", se, at, data[from:min(at, len(data))])
}
