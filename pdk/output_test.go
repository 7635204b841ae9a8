//go:build !wasip1

package pdk

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

type outItem struct {
	Path string `json:"path"`
}

type outResult struct {
	Value   *string           `json:"value" jsonschema:"null when there is none"`
	Lines   []string          `json:"lines"`
	Items   []outItem         `json:"items,omitempty"`
	Globals map[string]any    `json:"globals"`
	Raw     json.RawMessage   `json:"raw"`
	When    time.Time         `json:"when"`
	Data    []byte            `json:"data"`
	Count   int               `json:"count"`
	Mode    string            `json:"mode" enum:"a,b"`
	Nested  outItem           `json:"nested"`
	Ptr     *outItem          `json:"ptr"`
	Hidden  string            `json:"-"`
	Extra   map[string]string `json:"extra,omitempty"`
}

// TestOutputSchema: the derived schema is true of what encoding/json
// writes for the type, nil slices, maps and pointers included, checked
// with the validator the kernel uses.
func TestOutputSchema(t *testing.T) {
	raw, err := OutputSchema[outResult]()
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	v := "x"
	for name, r := range map[string]outResult{
		"zero": {Mode: "a"},
		"full": {Value: &v, Lines: []string{"l"}, Items: []outItem{{"p"}}, Globals: map[string]any{"g": 1}, Raw: json.RawMessage(`[1]`),
			When: time.Now(), Data: []byte{1, 2}, Count: 3, Mode: "b", Ptr: &outItem{"q"}, Extra: map[string]string{"k": "v"}},
	} {
		b, _ := json.Marshal(r)
		var inst any
		_ = json.Unmarshal(b, &inst)
		if err := rs.Validate(inst); err != nil {
			t.Errorf("%s: %s fails its own schema %s: %v", name, b, raw, err)
		}
	}
	for _, bad := range []string{
		`{"value":1,"lines":null,"globals":null,"raw":null,"when":"2020-01-01T00:00:00Z","data":null,"count":0,"mode":"a","nested":{"path":""},"ptr":null}`,
		`{"value":null,"lines":null,"globals":null,"raw":null,"when":"2020-01-01T00:00:00Z","data":null,"count":0,"mode":"c","nested":{"path":""},"ptr":null}`,
		`{"value":null,"lines":null,"globals":null,"raw":null,"when":"2020-01-01T00:00:00Z","data":null,"count":0,"mode":"a","nested":{"path":""},"ptr":null,"other":1}`,
		`{"value":null}`,
	} {
		var inst any
		_ = json.Unmarshal([]byte(bad), &inst)
		if rs.Validate(inst) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
	for _, want := range []string{`"value":{"type":["string","null"]`, `"lines":{"type":["array","null"]`, `"items":{"type":"array"`,
		`"when":{"type":"string","format":"date-time"}`, `"data":{"type":["string","null"],"contentEncoding":"base64"}`, `"raw":{}`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("schema %s lacks %s", raw, want)
		}
	}
	if _, err := OutputSchema[[]string](); err == nil || !strings.Contains(err.Error(), "result type must be a struct") {
		t.Errorf("a slice result type: %v", err)
	}
}

// TestReturns: a tool's description carries the output schema, and a
// value of another type than declared is an internal error, not a result.
func TestReturns(t *testing.T) {
	resetRegistry(t)
	type p struct {
		Wrong bool `json:"wrong,omitempty"`
		None  bool `json:"none,omitempty"`
		Ptr   bool `json:"ptr,omitempty"`
		Empty bool `json:"empty,omitempty"`
	}
	Declare("r", "1")
	Tool("typed", "Typed.", func(_ *Call, in p) (Result, error) {
		switch {
		case in.Wrong:
			return OK("wrong", map[string]any{"path": "x"}), nil
		case in.None:
			return Fail("no value"), nil
		case in.Ptr:
			return OK("ptr", &outItem{Path: "p"}), nil
		case in.Empty:
			return OK("empty", nil), nil
		}
		return OK("ok", outItem{Path: "v"}), nil
	}, Returns[outItem]())
	Tool("untyped", "Untyped.", func(*Call, p) (Result, error) { return OK("", 1), nil })
	var d struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(handleDescribe(nil), &d); err != nil {
		t.Fatal(err)
	}
	if got := string(d.Tools[0]["output_schema"]); got != `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}` {
		t.Errorf("output_schema = %s", got)
	}
	if _, has := d.Tools[1]["output_schema"]; has {
		t.Errorf("a tool without Returns declares %s", d.Tools[1]["output_schema"])
	}
	call := func(params string) string {
		return string(handleCall([]byte(`{"tool":"typed","params":` + params + `}`)))
	}
	for params, want := range map[string]string{
		`{}`:             `{"ok":true,"message":"ok","value":{"path":"v"}}`,
		`{"ptr":true}`:   `{"ok":true,"message":"ptr","value":{"path":"p"}}`,
		`{"none":true}`:  `{"ok":false,"message":"no value"}`,
		`{"empty":true}`: `{"error":{"kind":"internal","message":"tool typed returned a successful result without a value, but declares pdk.outItem (pdk.Returns)"}}`,
		`{"wrong":true}`: `{"error":{"kind":"internal","message":"tool typed returned a value of type map[string]interface {}, but declares pdk.outItem (pdk.Returns)"}}`,
	} {
		if got := call(params); got != want {
			t.Errorf("params %s:\n got %s\nwant %s", params, got, want)
		}
	}
}
