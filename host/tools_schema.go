package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// ErrBadOutput means a plugin returned a value its declared output schema
// refuses. It is an internal error (a bug of the plugin), of no
// backend.Err* kind.
var ErrBadOutput = errors.New("the result value breaks the tool's output schema")

// resolveSchema resolves a tool's input schema; none means any object.
func resolveSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// resolveOutputSchema resolves a tool's declared output schema; none
// (nil) means the tool promises no shape.
func resolveOutputSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	return resolveSchema(raw)
}

// checkOutput holds a plugin to the output schema it declared: a value
// the schema refuses, or a successful result without one (MCP clients
// require structured content of such a tool), is the plugin's bug
// (ErrBadOutput), not an answer the kernel passes on as structured content
// a client would trust. A failed result without a value promises nothing.
func checkOutput(e *toolEntry, ok bool, value json.RawMessage) error {
	if e.output == nil {
		return nil
	}
	t := bytes.TrimSpace(value)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		if ok {
			return fmt.Errorf("call %s: plugin %s declares an output schema but returned a successful result without a value, a bug to report to the plugin's author: %w",
				e.tool.Name, e.tool.Plugin, ErrBadOutput)
		}
		return nil
	}
	var v any
	if err := json.Unmarshal(t, &v); err != nil {
		return fmt.Errorf("call %s: plugin %s returned a value that is not JSON (%v): %w", e.tool.Name, e.tool.Plugin, err, ErrBadOutput)
	}
	if err := e.output.Validate(v); err != nil {
		return fmt.Errorf("call %s: plugin %s returned a value its declared output schema refuses (%s), a bug to report to the plugin's author: %w",
			e.tool.Name, e.tool.Plugin, schemaError(err), ErrBadOutput)
	}
	return nil
}
