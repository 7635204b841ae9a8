package wasm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// TestDescribeOutputSchema: a tool's output_schema is optional, kept as
// given when it is an object schema, and refused otherwise.
func TestDescribeOutputSchema(t *testing.T) {
	for _, c := range []struct {
		name, schema, want string // want: "" accepts
	}{
		{"absent", "", ""},
		{"null", "null", ""},
		{"object", `{"type":"object","properties":{"n":{"type":"integer"}}}`, ""},
		{"not an object schema", `{"type":"string"}`, `output_schema must describe an object ("type":"object"), got type "string"`},
		{"no type", `{"properties":{}}`, `output_schema must say "type":"object"`},
		{"not JSON Schema", `[1]`, "output_schema must be a JSON Schema object"},
		{"too big", `{"type":"object","description":"` + strings.Repeat("x", maxSchemaBytes) + `"}`, "output_schema is over"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Description{ABI: ABIVersion, Name: "p", Kind: KindTool, Tools: []ToolSpec{{Name: "t", OutputSchema: json.RawMessage(c.schema)}}}
			p := &Plugin{exports: map[string]bool{exportCall: true}}
			err := p.validate(&d)
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want == "":
				got, want := string(d.Tools[0].OutputSchema), c.schema
				if want == "null" {
					want = ""
				}
				if got != want {
					t.Fatalf("output schema %q, want %q", got, want)
				}
				if string(d.Tools[0].InputSchema) != defaultSchemaJS {
					t.Fatalf("input schema %q", d.Tools[0].InputSchema)
				}
			case !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), c.want):
				t.Fatalf("want ErrInvalid with %q, got %v", c.want, err)
			}
		})
	}
}
