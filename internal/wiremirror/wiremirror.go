// Package wiremirror checks, by reflection, that two Go spellings of one
// JSON wire agree. Where a Wasm guest cannot import the host's types (the
// containers tool, the pdk), each side declares the JSON itself
// (RATIONALE.md, "Deliberate repetition"); a test of one side calls Check
// so that a renamed tag or a changed kind fails at once instead of
// decoding to a silent zero.
package wiremirror

import (
	"reflect"
	"slices"
	"strings"
	"time"
)

// Reporter is what Check uses of a testing.T.
type Reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// Check reports where part's JSON is not whole's: recursively, every
// field of a part struct (but those named in own, part's own additions)
// must be a field of the whole struct with the same JSON name, of a kind
// that decodes into it. part is what a reader reads of a writer's whole
// answer, or what a sender sends to a receiver that decodes strictly.
// Pointers are followed on both sides and every integer is one kind
// (JSON spells them alike), a time.Time may be read as its RFC 3339
// text, and omitempty may differ: it changes no meaning. For a wire both
// sides must spell in full, call it both ways.
func Check(t Reporter, path string, part, whole reflect.Type, own ...string) {
	t.Helper()
	for part.Kind() == reflect.Pointer {
		part = part.Elem()
	}
	for whole.Kind() == reflect.Pointer {
		whole = whole.Elem()
	}
	isTime := func(t reflect.Type) bool { return t == reflect.TypeFor[time.Time]() }
	if (isTime(whole) || isTime(part)) && (part.Kind() == reflect.String || whole.Kind() == reflect.String) {
		return
	}
	if kindOf(part) != kindOf(whole) {
		t.Errorf("%s: %s, the other side's %s", path, part, whole)
		return
	}
	switch part.Kind() {
	case reflect.Slice, reflect.Array:
		Check(t, path+"[]", part.Elem(), whole.Elem())
	case reflect.Map:
		Check(t, path+"[key]", part.Key(), whole.Key())
		Check(t, path+"[]", part.Elem(), whole.Elem())
	case reflect.Struct:
		checkFields(t, path, part, whole, own)
	}
}

func checkFields(t Reporter, path string, part, whole reflect.Type, own []string) {
	t.Helper()
	byName := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(whole) {
		if name := jsonName(f); name != "" {
			byName[name] = f
		}
	}
	for _, f := range reflect.VisibleFields(part) {
		name := jsonName(f)
		if name == "" || slices.Contains(own, name) {
			continue
		}
		if w, ok := byName[name]; ok {
			Check(t, path+"."+name, f.Type, w.Type)
		} else {
			t.Errorf("%s.%s: the other side's %s has no such field", path, name, whole)
		}
	}
}

// kindOf is t's kind with every integer kind but byte as reflect.Int:
// a []byte is base64 text on the wire, not a list of numbers.
func kindOf(t reflect.Type) reflect.Kind {
	switch k := t.Kind(); k {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return reflect.Int
	default:
		return k
	}
}

// jsonName is the field's name on the wire; "" for one JSON leaves out,
// and for an embedded struct, whose fields VisibleFields lists in its
// place as JSON flattens them.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" || f.Anonymous || !f.IsExported() {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}
