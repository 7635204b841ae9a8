package wasm

import (
	"testing"
)

// decodeStrict accepts one JSON value with padding around it, and refuses
// unknown fields and whatever follows the value, a stray bracket included.
func TestDecodeStrict(t *testing.T) {
	type msg struct {
		OK *bool `json:"ok"`
	}
	for _, in := range []string{`{"ok":true}`, ` {"ok":false} `, "{\"ok\":true}\n\t      "} {
		var m msg
		if err := decodeStrict(pad8([]byte(in)), &m); err != nil || m.OK == nil {
			t.Errorf("decodeStrict(%q) = %v, %+v; want it decoded", in, err, m)
		}
	}
	for _, in := range []string{`{"ok":true}}`, `{"ok":true}]`, `{"ok":true} {"ok":false}`, `{"ok":true}x`, `{"ok":true,"extra":1}`, ``, `{"ok":`} {
		var m msg
		if err := decodeStrict([]byte(in), &m); err == nil {
			t.Errorf("decodeStrict(%q) accepted it", in)
		}
	}
}
