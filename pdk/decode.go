package pdk

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errTrailing is DecodeStrict's error for bytes after the value.
var errTrailing = errors.New("unexpected data after the JSON value")

// DecodeStrict decodes one JSON value into v, refusing fields v does not
// have and anything after the value: how Tool decodes params, and the
// one strict decoder a plugin needs for JSON of its own (a config value,
// a record it wrote). Empty input is an error; a caller for which nothing
// means the defaults checks for it first.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	// The bytes after the value, not dec.More: More reads on into the
	// next token and lets a stray ']' or '}' through.
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return errTrailing
	}
	return nil
}
