package host

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func TestParamsProblem(t *testing.T) {
	const schema = `{"type":"object","additionalProperties":false,"required":["action"],"properties":{
		"action":{"type":"string","enum":["start","stop"]},
		"limit":{"type":"integer","minimum":1},
		"opts":{"type":"object","additionalProperties":false,"properties":{"verbose":{"type":"boolean"}}},
		"tags":{"type":"object","additionalProperties":false,"patternProperties":{"^x-":{"type":"string"}}}}}`
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for params, want := range map[string]string{
		`{"action":"go"}`:                         `field /action: want one of "start", "stop", got string "go"`,
		`{"action":"start","limit":1.5}`:          `field /limit: want integer, got number 1.5`,
		`{"action":"start","limit":0}`:            `limit: minimum`, // the validator's words, which the walk leaves to it
		`{"action":"start","opts":{"verbos":1}}`:  `field /opts/verbos is not a field of /opts; did you mean "verbose"?`,
		`{"action":"start","tags":{"y":"1"}}`:     `tags`, // pattern properties: no guess at which names are fields
		`{"action":"start","limt":2}`:             `field /limt is not a field of this tool; did you mean "limit"?`,
		`{"limit":2}`:                             `required field /action is missing`,
		`{"action":"start","opts":{"verbose":1}}`: `field /opts/verbose: want boolean, got integer 1`,
	} {
		var v any
		if err := json.Unmarshal([]byte(params), &v); err != nil {
			t.Fatal(err)
		}
		verr := rs.Validate(v)
		if verr == nil {
			t.Errorf("%s: the schema accepts it; the case is wrong", params)
			continue
		}
		got := paramsProblem("demo", &s, v, verr)
		if !strings.Contains(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", params, got, want)
		}
		if sig := `demo takes {"action": one of "start", "stop" (required), "limit": integer,`; !strings.Contains(got, sig) {
			t.Errorf("%s: the message lacks what the tool takes (%s): %s", params, sig, got)
		}
	}
}
