package wasm

import (
	"bytes"
	"encoding/json"
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

// validName: [A-Za-z0-9_-], 1–64 bytes (tool names must survive MCP and
// the "plugin::tool" namespacing).
func validName(s string) bool {
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
	if !validName(d.Name) {
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
		if !validName(t.Name) {
			return bad("tool name %q must be 1–%d characters of [A-Za-z0-9_-]", t.Name, maxNameLen)
		}
		if seen[t.Name] {
			return bad("declares tool %q twice", t.Name)
		}
		seen[t.Name] = true
		if len(t.Description) > maxDescription {
			return bad("tool %s: description is over %d bytes", t.Name, maxDescription)
		}
		s := bytes.TrimSpace(t.InputSchema)
		if len(s) == 0 || bytes.Equal(s, []byte("null")) {
			t.InputSchema = json.RawMessage(defaultSchemaJS)
			continue
		}
		if len(s) > maxSchemaBytes {
			return bad("tool %s: input_schema is over %d bytes", t.Name, maxSchemaBytes)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(s, &obj); err != nil {
			return bad("tool %s: input_schema must be a JSON Schema object: %v", t.Name, err)
		}
		if typ, ok := obj["type"]; ok && !bytes.Equal(bytes.TrimSpace(typ), []byte(`"object"`)) {
			return bad("tool %s: input_schema must describe an object (\"type\":\"object\"), got type %s", t.Name, typ)
		}
		t.InputSchema = s
	}
	return nil
}
