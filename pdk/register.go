package pdk

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ABIVersion is the version of docs/ABI.md this pdk speaks.
const ABIVersion = 1

// Capability is what a plugin declares it needs; config grants it.
type Capability = string

// The capabilities of docs/ABI.md.
const (
	CapShell     Capability = "shell"     // Shell.*
	CapFSRead    Capability = "fs.read"   // FS.Stat, List, Read, Glob, Grep
	CapFSWrite   Capability = "fs.write"  // FS.Write, Edit, Remove
	CapLifecycle Capability = "lifecycle" // Lifecycle.*
	CapJobs      Capability = "jobs"      // Jobs.*
	// CapContainers: Containers.Do, agent-managed containers; only the
	// bundled containers tool gets it without a grant.
	CapContainers Capability = "containers"
)

// registry is the plugin being built by Declare, Tool and Policy.
var registry struct {
	name, version string
	caps          []string
	tools         []*toolSpec
	policy        func(CheckRequest) Decision
	actions       []string
	errs          []string // registration mistakes, reported by wai_describe
}

func regError(format string, args ...any) {
	registry.errs = append(registry.errs, fmt.Sprintf(format, args...))
}

// Declare names the plugin and the capabilities it needs. Call it once,
// from init.
func Declare(name, version string, caps ...Capability) {
	if registry.name != "" {
		regError("Declare called twice (as %q and %q)", registry.name, name)
	}
	registry.name, registry.version = name, version
	registry.caps = append(registry.caps, caps...)
}

// Tool registers a tool. Its input schema is derived from P (see Schema);
// the params of each call are decoded into a P, unknown fields refused.
func Tool[P any](name, description string, fn func(c *Call, params P) (Result, error), opts ...ToolOption) {
	schema, err := Schema[P]()
	if err != nil {
		regError("tool %s: %v", name, err)
	}
	t := &toolSpec{Name: name, Description: description, InputSchema: schema}
	for _, o := range opts {
		o(t)
	}
	t.handle = func(c *Call, raw json.RawMessage) (Result, error) {
		var p P
		if len(bytes.TrimSpace(raw)) > 0 {
			if err := DecodeStrict(raw, &p); err != nil {
				return Result{}, Errorf(KindInvalid, "%s: bad params: %v", name, err)
			}
		}
		res, err := fn(c, p)
		if err == nil {
			err = t.checkOutput(res)
		}
		return res, err
	}
	for _, o := range registry.tools {
		if o.Name == name {
			regError("tool %s registered twice", name)
		}
	}
	registry.tools = append(registry.tools, t)
}

// Policy registers the plugin's check function, making it a policy
// plugin. actions limits the actions it is asked about (none: all).
func Policy(fn func(req CheckRequest) Decision, actions ...string) {
	if registry.policy != nil {
		regError("Policy called twice")
	}
	registry.policy = fn
	registry.actions = actions
}
