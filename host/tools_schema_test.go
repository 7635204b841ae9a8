package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/internal/wasm"
)

const pathSchema = `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`

// typedTools declares an output schema for its tool "typed", whose value
// is whatever the call's params say.
type typedTools struct {
	goTools
	output string
}

func (g *typedTools) Describe() wasm.Description {
	d := g.goTools.Describe()
	for i := range d.Tools {
		if d.Tools[i].Name == "typed" {
			d.Tools[i].OutputSchema = json.RawMessage(g.output)
		}
	}
	return d
}

func newTyped(output string) *typedTools {
	return &typedTools{output: output, goTools: goTools{name: "typed", tools: map[string]func(context.Context, wasm.Env, json.RawMessage) (wasm.ToolResult, error){
		"typed": func(_ context.Context, _ wasm.Env, params json.RawMessage) (wasm.ToolResult, error) {
			var p struct {
				OK    bool            `json:"ok"`
				Value json.RawMessage `json:"value"`
			}
			_ = json.Unmarshal(params, &p)
			return wasm.ToolResult{OK: p.OK, Message: "answered", Value: p.Value}, nil
		},
	}}}
}

// TestOutputSchemaIsKept: the kernel lists a tool's output schema and
// holds every result value to it; a value it refuses is the plugin's bug
// (ErrBadOutput), never passed on.
func TestOutputSchemaIsKept(t *testing.T) {
	k, _ := newKernel(t, testConfig(t), withTools(newTyped(pathSchema), nil))
	if tools := k.Tools(); len(tools) != 1 || string(tools[0].OutputSchema) != pathSchema {
		t.Fatalf("Tools() = %+v", tools)
	}
	ctx := context.Background()
	for params, bad := range map[string]bool{
		`{"value":{"path":"a"}}`:           false,
		`{}`:                               false, // a failure without a value promises nothing
		`{"value":null}`:                   false,
		`{"value":{"path":"a"},"ok":true}`: false,
		`{"ok":true}`:                      true, // a success must carry its value
		`{"value":{"path":1}}`:             true,
		`{"value":{"path":"a","x":1}}`:     true,
		`{"value":{}}`:                     true,
		`{"value":["not","an","object"]}`:  true,
	} {
		res, err := k.Call(ctx, "s", "typed", json.RawMessage(params))
		switch {
		case bad && (!errors.Is(err, ErrBadOutput) || backend.KindOf(err) != nil || !strings.Contains(err.Error(), "call typed: plugin typed ")):
			t.Errorf("%s: want ErrBadOutput, got %+v, %v", params, res, err)
		case !bad && err != nil:
			t.Errorf("%s: %v", params, err)
		}
	}
}

func TestUnusableOutputSchemaRefused(t *testing.T) {
	_, err := New(context.Background(), testConfig(t), WithBackend(newFake("fake", true)),
		withTools(newTyped(`{"type":"object","properties":{"n":{"type":"integer","minimum":"zero"}}}`), nil))
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "tool typed has an unusable output schema") {
		t.Fatalf("want ErrInvalid about the output schema, got %v", err)
	}
}
