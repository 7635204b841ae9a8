package pdk

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"
)

// Call is the context of one tool call.
type Call struct {
	Tool     string
	ID       string // the kernel's call id, for logs
	Session  string
	Deadline time.Time // the call is interrupted at this instant
}

// Remaining is the time left before the deadline.
func (c *Call) Remaining() time.Duration { return time.Until(c.Deadline) }

// Result is a tool's answer to the model: a message and, optionally, a
// structured value. A failed result (OK false) is still an answer — the
// model reads why; return an error instead for calls that could not be
// served at all (the error keeps its Kind on the way to the kernel).
type Result struct {
	OK      bool
	Message string
	Value   any
}

// OK returns a successful result.
func OK(message string, value any) Result { return Result{OK: true, Message: message, Value: value} }

// Fail returns a failed result with a message for the model.
func Fail(format string, args ...any) Result {
	return Result{Message: fmt.Sprintf(format, args...)}
}

// FailWith returns a failed result that also carries a value (for example
// the partial output of a command that timed out).
func FailWith(message string, value any) Result { return Result{Message: message, Value: value} }

// ToolOption adjusts a tool's description.
type ToolOption func(*toolSpec)

// ReadOnly marks a tool that changes nothing.
func ReadOnly() ToolOption {
	return func(t *toolSpec) { t.annotations().ReadOnlyHint = true }
}

// Destructive says whether a tool may destroy data (MCP assumes it may).
func Destructive(b bool) ToolOption {
	return func(t *toolSpec) { t.annotations().DestructiveHint = &b }
}

// Idempotent marks a tool whose repeated calls change nothing more.
func Idempotent() ToolOption {
	return func(t *toolSpec) { t.annotations().IdempotentHint = true }
}

// OpenWorld says whether a tool reaches outside the workspace.
func OpenWorld(b bool) ToolOption {
	return func(t *toolSpec) { t.annotations().OpenWorldHint = &b }
}

// Title gives a tool a human-readable title.
func Title(s string) ToolOption {
	return func(t *toolSpec) { t.annotations().Title = s }
}

// Returns declares the type R of the tool's result values: its JSON
// Schema (see OutputSchema) becomes the tool's output schema, which MCP
// clients read as the shape of structuredContent. Every Value the tool
// returns must then be an R or a *R (or nil, for a result without one);
// another type is an internal error, so the schema cannot lie.
func Returns[R any]() ToolOption {
	return func(t *toolSpec) {
		s, err := OutputSchema[R]()
		if err != nil {
			regError("tool %s: result type: %v", t.Name, err)
			return
		}
		t.OutputSchema, t.output = s, reflect.TypeFor[R]()
	}
}

// checkOutput refuses a value of another type than Returns declared, and
// a successful result without one: MCP clients require structured content
// from a tool with an output schema.
func (t *toolSpec) checkOutput(res Result) error {
	v := res.Value
	if t.output == nil || v == nil && !res.OK {
		return nil
	}
	if v == nil {
		return Errorf(KindInternal, "tool %s returned a successful result without a value, but declares %s (pdk.Returns)", t.Name, t.output)
	}
	if got := reflect.TypeOf(v); got == t.output || got == reflect.PointerTo(t.output) {
		return nil
	}
	return Errorf(KindInternal, "tool %s returned a value of type %s, but declares %s (pdk.Returns)", t.Name, reflect.TypeOf(v), t.output)
}

// InputSchema replaces the schema derived from the params type.
func InputSchema(schema json.RawMessage) ToolOption {
	return func(t *toolSpec) { t.InputSchema = schema }
}

type annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"read_only_hint,omitempty"`
	DestructiveHint *bool  `json:"destructive_hint,omitempty"`
	IdempotentHint  bool   `json:"idempotent_hint,omitempty"`
	OpenWorldHint   *bool  `json:"open_world_hint,omitempty"`
}

type toolSpec struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Annotations  *annotations    `json:"annotations,omitempty"`

	handle func(c *Call, params json.RawMessage) (Result, error)
	// output is the type Returns declared: every Value must be one.
	output reflect.Type
}

func (t *toolSpec) annotations() *annotations {
	if t.Annotations == nil {
		t.Annotations = &annotations{}
	}
	return t.Annotations
}
