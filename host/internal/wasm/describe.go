package wasm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/wai-dev/wai/host/backend"
)

// Bounds on what a description may hold.
const (
	maxTools        = 256
	maxNameLen      = 64
	maxDescription  = 8 << 10
	maxSchemaBytes  = 64 << 10
	defaultSchemaJS = `{"type":"object"}`
)

var knownActions = append([]string{ActionShellExec, ActionShellScript, ActionFSWrite, ActionFSEdit, ActionFSRemove, ActionLifecycleStart, ActionLifecycleStop},
	ContainerActions...)

// ValidName reports whether s is a valid plugin or tool name:
// [A-Za-z0-9_-], 1–64 bytes (tool names must survive MCP and the
// "plugin::tool" namespacing). The kernel holds tool aliases to it too.
func ValidName(s string) bool {
	if s == "" || len(s) > maxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (p *Plugin) validate(d *Description) error {
	bad := func(format string, args ...any) error {
		return errorf(p.name, "describe", backend.ErrInvalid, format, args...)
	}
	if d.ABI != ABIVersion {
		return bad("speaks ABI %d; this host speaks ABI %d: rebuild the plugin against a matching pdk", d.ABI, ABIVersion)
	}
	if !ValidName(d.Name) {
		return bad("name %q must be 1–%d characters of [A-Za-z0-9_-]", d.Name, maxNameLen)
	}
	p.name = d.Name
	if len(d.Version) > maxNameLen {
		return bad("version is longer than %d bytes", maxNameLen)
	}
	if _, err := parseCaps(d.Name, "capabilities", d.Capabilities); err != nil {
		return err
	}
	switch d.Kind {
	case KindTool:
		if !p.exports[exportCall] {
			return bad("is a tool plugin but does not export %s", exportCall)
		}
		if len(d.Tools) == 0 {
			return bad("is a tool plugin with no tools")
		}
		if len(d.Actions) > 0 {
			return bad("actions are for policy plugins; a tool plugin declares none")
		}
	case KindPolicy:
		if !p.exports[exportCheck] {
			return bad("is a policy plugin but does not export %s", exportCheck)
		}
		if len(d.Tools) > 0 {
			return bad("is a policy plugin; it cannot declare tools")
		}
		for _, a := range d.Actions {
			if !slices.Contains(knownActions, a) {
				return bad("actions: unknown action %q (known: %v)", a, knownActions)
			}
		}
	default:
		return bad("kind %q is neither %q nor %q", d.Kind, KindTool, KindPolicy)
	}
	if len(d.Tools) > maxTools {
		return bad("declares %d tools, over the limit of %d", len(d.Tools), maxTools)
	}
	seen := map[string]bool{}
	for i := range d.Tools {
		t := &d.Tools[i]
		if !ValidName(t.Name) {
			return bad("tool name %q must be 1–%d characters of [A-Za-z0-9_-]", t.Name, maxNameLen)
		}
		if seen[t.Name] {
			return bad("declares tool %q twice", t.Name)
		}
		seen[t.Name] = true
		if len(t.Description) > maxDescription {
			return bad("tool %s: description is over %d bytes", t.Name, maxDescription)
		}
		in, err := objectSchema(t.InputSchema, true)
		if err != nil {
			return bad("tool %s: input_schema %v", t.Name, err)
		}
		out, err := objectSchema(t.OutputSchema, false)
		if err != nil {
			return bad("tool %s: output_schema %v", t.Name, err)
		}
		t.InputSchema, t.OutputSchema = in, out
	}
	return nil
}

// objectSchema checks a tool's schema: a JSON object of at most
// maxSchemaBytes describing an object. An absent input schema means any
// object; an absent output schema stays absent (no shape is promised).
func objectSchema(raw json.RawMessage, input bool) (json.RawMessage, error) {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 || bytes.Equal(s, []byte("null")) {
		if input {
			return json.RawMessage(defaultSchemaJS), nil
		}
		return nil, nil
	}
	if len(s) > maxSchemaBytes {
		return nil, fmt.Errorf("is over %d bytes", maxSchemaBytes)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(s, &obj); err != nil {
		return nil, fmt.Errorf("must be a JSON Schema object: %v", err)
	}
	typ, ok := obj["type"]
	if !ok && !input {
		return nil, fmt.Errorf("must say \"type\":\"object\" (MCP's structured content is an object)")
	}
	if ok && !bytes.Equal(bytes.TrimSpace(typ), []byte(`"object"`)) {
		return nil, fmt.Errorf("must describe an object (\"type\":\"object\"), got type %s", typ)
	}
	return s, nil
}
