package pdk

import "testing"

// DecodeStrict takes one value with only the fields its target has: an
// unknown field, a second value or a stray bracket after it is an error,
// not a value decoded from part of what was sent.
func TestDecodeStrict(t *testing.T) {
	var v struct {
		Name string `json:"name"`
	}
	if err := DecodeStrict([]byte(` {"name":"a"} `), &v); err != nil || v.Name != "a" {
		t.Fatalf("a good value: %+v, %v", v, err)
	}
	for _, bad := range []string{``, `{"nmae":"a"}`, `{"name":"a"} {"name":"b"}`, `{"name":"a"}]`, `{"name":"a"}}`} {
		if err := DecodeStrict([]byte(bad), &v); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}
