// Package plugconf reads a bundled policy's config from the plugin config
// the host hands it: each key of the policy's TOML table arrives as a
// string, JSON-encoded unless it was a string. It rebuilds the table as one
// JSON object for the policy's strict ParseConfig, so the Wasm plugin and
// the in-process policy read their config the same way.
package plugconf

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Object collects keys from get into a JSON object. A value that is not
// valid JSON is taken as the string it is.
func Object(keys []string, get func(string) (string, bool)) []byte {
	m := map[string]json.RawMessage{}
	for _, k := range keys {
		v, ok := get(k)
		if !ok {
			continue
		}
		if json.Valid([]byte(v)) {
			m[k] = json.RawMessage(v)
			continue
		}
		b, _ := json.Marshal(v)
		m[k] = b
	}
	if len(m) == 0 {
		return nil
	}
	b, _ := json.Marshal(m)
	return b
}

// Decode decodes a policy's JSON config into v strictly: a key v does not
// have, or anything after the object, is an error. Empty input and null
// leave v as it is (its defaults). It is the one strict decoder of the
// policies, which may not import the host's.
func Decode(raw []byte, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	// The bytes after the value, not dec.More: More reads on into the
	// next token and lets a stray ']' or '}' through.
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) > 0 {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Rules builds a policy's rules from its plugin config: the keys of its
// TOML table, read through get (pdk.Config) into one JSON object, parsed
// strictly by parse and built by build. A Wasm policy calls it once, on
// its first check (the config is there only once the host calls), and
// denies every request with the error it returns.
func Rules[C, R any](keys []string, get func(string) (string, bool), parse func([]byte) (C, error), build func(C) (R, error)) (R, error) {
	c, err := parse(Object(keys, get))
	if err != nil {
		var zero R
		return zero, err
	}
	return build(c)
}
