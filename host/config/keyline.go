package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// backendKeyLines maps each key inside a [backends.NAME] table, below the
// table ("backends.host.env.FOO"), to the line that sets it, so that a key
// the backend refuses can be shown where it is. A key whose line cannot be
// found is left out.
func backendKeyLines(data []byte, md toml.MetaData) map[string]int {
	var lines map[string]int
	for _, k := range md.Keys() {
		if len(k) < 3 || k[0] != "backends" {
			continue
		}
		if n := keyLine(data, md, k); n > 0 {
			if lines == nil {
				lines = map[string]int{}
			}
			lines[k.String()] = n
		}
	}
	return lines
}

// backendKeyLine returns the line of the first key of table
// [backends.NAME] whose last element is field ("" when none is known): a
// backend's parser names only the field it refused, not where it is.
func (f File) backendKeyLine(name, field string) int {
	prefix := "backends." + name + "."
	best := 0
	for k, n := range f.backendLines {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		parts := strings.Split(k, ".")
		if parts[len(parts)-1] == field && (best == 0 || n < best) {
			best = n
		}
	}
	return best
}

// errProbe is decoded at the key whose line we want: the decoder reports an
// Unmarshaler's error as a ParseError carrying the position it recorded for
// that key. The toml module keeps key positions private; this is the one
// public door to them.
type errProbe struct{}

var errProbeHit = errors.New("wai: config key probe")

func (errProbe) UnmarshalTOML(any) error { return errProbeHit }

// atLine returns " at line N" for key, or "" when the line cannot be found.
func atLine(data []byte, md toml.MetaData, key toml.Key) string {
	if n := keyLine(data, md, key); n > 0 {
		return fmt.Sprintf(" at line %d", n)
	}
	return ""
}

// keyLine decodes data once more into a type built to hold only key, with
// an errProbe at its end.
func keyLine(data []byte, md toml.MetaData, key toml.Key) int {
	if len(key) == 0 {
		return 0
	}
	t := reflect.TypeOf(errProbe{})
	for i := len(key) - 1; i >= 0; i-- {
		if i < len(key)-1 {
			switch md.Type(key[:i+1]...) {
			case "ArrayHash", "Array":
				t = reflect.SliceOf(t)
			}
		}
		t = reflect.StructOf([]reflect.StructField{{
			Name: "F",
			Type: t,
			Tag:  reflect.StructTag("toml:" + strconv.Quote(key[i])),
		}})
	}
	v := reflect.New(t)
	_, err := toml.NewDecoder(strings.NewReader(string(data))).Decode(v.Interface())
	var pe toml.ParseError
	// ParseError does not unwrap, so the probe is recognised by its text.
	if errors.As(err, &pe) && pe.Message == errProbeHit.Error() {
		return pe.Position.Line
	}
	return 0
}
