package pdk

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Schema derives the JSON Schema of a params type P, the way Tool does:
//
//   - a field's name is its json tag name; `json:"-"` skips it;
//   - a field is required unless its json tag says omitempty;
//   - `jsonschema:"..."` is its description;
//   - `enum:"a,b,c"` restricts it to those values;
//   - `minimum:"1"`, `maximum:"120"`, `maxLength:"80"`, `maxItems:"64"`,
//     `pattern:"^[a-z]+$"` and `default:"30"` (a JSON value, or else a
//     string) add the keyword of the same name.
//
// Structs allow no other properties. Strings, booleans, integers, floats,
// slices, arrays, maps with string keys, pointers (to their element),
// json.RawMessage and any (no constraint) are supported.
func Schema[P any]() (json.RawMessage, error) {
	return schemaOf(reflect.TypeFor[P](), false)
}

// OutputSchema derives the JSON Schema of a result type R, the way
// Returns does: as Schema, with one difference that keeps it true of
// what encoding/json writes: a slice, map or pointer field without
// omitempty may be null (a nil one is written as null).
func OutputSchema[R any]() (json.RawMessage, error) {
	return schemaOf(reflect.TypeFor[R](), true)
}

func schemaOf(t reflect.Type, output bool) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		what := "params must be a struct (the tool's arguments object)"
		if output {
			what = "a result type must be a struct (structured content is a JSON object)"
		}
		return nil, fmt.Errorf("%s, got %s", what, t)
	}
	s, err := (&schemaBuilder{seen: map[reflect.Type]bool{}, output: output}).build(t)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// jsonSchema is the subset of JSON Schema the builder emits, in a stable
// key order.
type jsonSchema struct {
	Type                 any             `json:"type,omitempty"` // a name, or a list of names
	Format               string          `json:"format,omitempty"`
	ContentEncoding      string          `json:"contentEncoding,omitempty"`
	Description          string          `json:"description,omitempty"`
	Properties           *properties     `json:"properties,omitempty"`
	Required             []string        `json:"required,omitempty"`
	AdditionalProperties any             `json:"additionalProperties,omitempty"`
	Items                *jsonSchema     `json:"items,omitempty"`
	Enum                 []any           `json:"enum,omitempty"`
	Minimum              *float64        `json:"minimum,omitempty"`
	Maximum              *float64        `json:"maximum,omitempty"`
	MaxLength            *int            `json:"maxLength,omitempty"`
	MaxItems             *int            `json:"maxItems,omitempty"`
	Pattern              string          `json:"pattern,omitempty"`
	Default              json.RawMessage `json:"default,omitempty"`
}

// properties keeps the struct's field order.
type properties struct {
	names   []string
	schemas []*jsonSchema
}

func (p *properties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range p.names {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(n)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(p.schemas[i])
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type schemaBuilder struct {
	seen   map[reflect.Type]bool // structs on the current path: recursion is refused
	output bool                  // a result type: nil slices, maps and pointers are null
}

var (
	rawMessageType    = reflect.TypeFor[json.RawMessage]()
	timeType          = reflect.TypeFor[time.Time]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func (b *schemaBuilder) build(t reflect.Type) (*jsonSchema, error) {
	switch {
	case t.Kind() == reflect.Pointer:
		return b.build(t.Elem())
	case t == rawMessageType:
		return &jsonSchema{}, nil
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && !implements(t, jsonMarshalerType):
		return &jsonSchema{Type: "string", ContentEncoding: "base64"}, nil // how encoding/json writes []byte
	case t == timeType:
		return &jsonSchema{Type: "string", Format: "date-time"}, nil
	case implements(t, jsonMarshalerType):
		return &jsonSchema{}, nil // its own encoding: no constraint we could vouch for
	case implements(t, textMarshalerType):
		return &jsonSchema{Type: "string"}, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return b.build(t.Elem())
	case reflect.String:
		return &jsonSchema{Type: "string"}, nil
	case reflect.Bool:
		return &jsonSchema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s := &jsonSchema{Type: "integer"}
		if t.Kind() >= reflect.Uint {
			zero := 0.0
			s.Minimum = &zero
		}
		return s, nil
	case reflect.Float32, reflect.Float64:
		return &jsonSchema{Type: "number"}, nil
	case reflect.Interface:
		return &jsonSchema{}, nil
	case reflect.Slice, reflect.Array:
		items, err := b.build(t.Elem())
		if err != nil {
			return nil, err
		}
		s := &jsonSchema{Type: "array", Items: items}
		if t.Kind() == reflect.Array {
			n := t.Len()
			s.MaxItems = &n
		}
		return s, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map %s: JSON object keys are strings", t)
		}
		v, err := b.build(t.Elem())
		if err != nil {
			return nil, err
		}
		return &jsonSchema{Type: "object", AdditionalProperties: v}, nil
	case reflect.Struct:
		return b.object(t)
	}
	return nil, fmt.Errorf("type %s has no JSON Schema", t)
}

func (b *schemaBuilder) object(t reflect.Type) (*jsonSchema, error) {
	if b.seen[t] {
		return nil, fmt.Errorf("type %s is recursive; params must be a finite tree", t)
	}
	b.seen[t] = true
	defer delete(b.seen, t)
	s := &jsonSchema{Type: "object", Properties: &properties{}, AdditionalProperties: false}
	if err := b.fields(t, s); err != nil {
		return nil, err
	}
	return s, nil
}

func (b *schemaBuilder) fields(t reflect.Type, s *jsonSchema) error {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if err := b.fields(et, s); err != nil { // embedded: fields are promoted
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs, err := b.build(f.Type)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if err := applyTags(fs, f); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		s.Properties.names = append(s.Properties.names, name)
		s.Properties.schemas = append(s.Properties.schemas, fs)
		if !strings.Contains(","+opts+",", ",omitempty,") && !strings.Contains(","+opts+",", ",omitzero,") {
			s.Required = append(s.Required, name)
			if b.output {
				nullable(fs, f.Type)
			}
		}
	}
	return nil
}

// implements reports whether t or *t implements iface.
func implements(t, iface reflect.Type) bool {
	return t.Kind() != reflect.Interface && (t.Implements(iface) || reflect.PointerTo(t).Implements(iface))
}

// nullable lets a field that encoding/json may write as null be null.
func nullable(s *jsonSchema, t reflect.Type) {
	switch t.Kind() {
	case reflect.Slice, reflect.Map, reflect.Pointer:
		if name, ok := s.Type.(string); ok && name != "" && t != rawMessageType {
			s.Type = []string{name, "null"}
		}
	}
}

func applyTags(s *jsonSchema, f reflect.StructField) error {
	s.Description = f.Tag.Get("jsonschema")
	if e, ok := f.Tag.Lookup("enum"); ok {
		for _, v := range strings.Split(e, ",") {
			v = strings.TrimSpace(v)
			switch s.Type {
			case "integer", "number":
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return fmt.Errorf("enum value %q is not a number", v)
				}
				s.Enum = append(s.Enum, n)
			default:
				s.Enum = append(s.Enum, v)
			}
		}
	}
	for _, k := range []struct {
		tag string
		dst **float64
	}{{"minimum", &s.Minimum}, {"maximum", &s.Maximum}} {
		if v, ok := f.Tag.Lookup(k.tag); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%s %q is not a number", k.tag, v)
			}
			*k.dst = &n
		}
	}
	for _, k := range []struct {
		tag string
		dst **int
	}{{"maxLength", &s.MaxLength}, {"maxItems", &s.MaxItems}} {
		if v, ok := f.Tag.Lookup(k.tag); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%s %q is not a non-negative integer", k.tag, v)
			}
			*k.dst = &n
		}
	}
	s.Pattern = f.Tag.Get("pattern")
	if d, ok := f.Tag.Lookup("default"); ok {
		if json.Valid([]byte(d)) && (s.Type != "string" || strings.HasPrefix(d, `"`)) {
			s.Default = json.RawMessage(d)
		} else {
			q, _ := json.Marshal(d)
			s.Default = q
		}
	}
	return nil
}

// Interface guards
var _ json.Marshaler = (*properties)(nil)
