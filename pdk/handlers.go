package pdk

import (
	"encoding/json"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

type wireError struct {
	Error *Error `json:"error"`
}

func errorOutput(err error) []byte {
	b, _ := json.Marshal(wireError{Error: toWire(err)})
	return b
}

type wireDescription struct {
	ABI          int         `json:"abi"`
	Name         string      `json:"name"`
	Version      string      `json:"version"`
	Kind         string      `json:"kind"`
	Tools        []*toolSpec `json:"tools,omitempty"`
	Capabilities []string    `json:"capabilities,omitempty"`
	Actions      []string    `json:"actions,omitempty"`
}

// handleDescribe answers wai_describe.
func handleDescribe([]byte) []byte {
	errs := slices.Clone(registry.errs)
	kind := "tool"
	switch {
	case registry.name == "":
		errs = append(errs, "no pdk.Declare(name, version, capabilities...) in the plugin's init")
	case registry.policy != nil && len(registry.tools) > 0:
		errs = append(errs, "a plugin is either a tool plugin or a policy plugin; this one registers both")
	case registry.policy != nil:
		kind = "policy"
	case len(registry.tools) == 0:
		errs = append(errs, "registers no tool and no policy")
	}
	if len(errs) > 0 {
		msg := strings.Join(errs, "; ")
		if registry.name != "" {
			// Without a Declare there is no name: "plugin : ..." would
			// read as a bug in the message.
			msg = "plugin " + registry.name + ": " + msg
		}
		return errorOutput(Errorf(KindInvalid, "%s", msg))
	}
	b, err := json.Marshal(wireDescription{ABI: ABIVersion, Name: registry.name, Version: registry.version, Kind: kind,
		Tools: registry.tools, Capabilities: registry.caps, Actions: registry.actions})
	if err != nil {
		return errorOutput(err)
	}
	return b
}

type wireCall struct {
	Tool       string          `json:"tool"`
	Params     json.RawMessage `json:"params"`
	CallID     string          `json:"call_id"`
	Session    string          `json:"session"`
	DeadlineMS int64           `json:"deadline_ms"`
	TimeoutMS  int64           `json:"timeout_ms"`
}

type wireResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	Value   any    `json:"value,omitempty"`
}

// handleCall answers wai_call. A panicking tool answers an internal error
// instead of taking the instance down.
func handleCall(input []byte) (out []byte) {
	var in wireCall
	if err := json.Unmarshal(input, &in); err != nil {
		return errorOutput(Errorf(KindInvalid, "wai_call: bad input: %v", err))
	}
	var t *toolSpec
	for _, c := range registry.tools {
		if c.Name == in.Tool {
			t = c
		}
	}
	if t == nil {
		return errorOutput(Errorf(KindNotFound, "plugin %s has no tool %q", registry.name, in.Tool))
	}
	defer func() {
		if r := recover(); r != nil {
			out = errorOutput(Errorf(KindInternal, "tool %s panicked: %v\n%s", in.Tool, r, lastFrames(debug.Stack(), 12)))
		}
	}()
	c := &Call{Tool: in.Tool, ID: in.CallID, Session: in.Session, Deadline: time.UnixMilli(in.DeadlineMS)}
	res, err := t.handle(c, in.Params)
	if err != nil {
		return errorOutput(err)
	}
	b, err := json.Marshal(wireResult(res))
	if err != nil {
		return errorOutput(Errorf(KindInternal, "tool %s: cannot encode its result: %v", in.Tool, err))
	}
	return b
}

type wireDecision struct {
	Decision  string `json:"decision"`
	Reason    string `json:"reason,omitempty"`
	ConfigKey string `json:"config_key,omitempty"`
}

// handleCheck answers wai_check. A panicking policy answers an error, which
// the kernel treats as a deny.
func handleCheck(input []byte) (out []byte) {
	if registry.policy == nil {
		return errorOutput(Errorf(KindInvalid, "plugin %s is not a policy", registry.name))
	}
	var req CheckRequest
	if err := json.Unmarshal(input, &req); err != nil {
		return errorOutput(Errorf(KindInvalid, "wai_check: bad input: %v", err))
	}
	defer func() {
		if r := recover(); r != nil {
			out = errorOutput(Errorf(KindInternal, "policy %s panicked: %v", registry.name, r))
		}
	}()
	d := registry.policy(req)
	w := wireDecision{Decision: "deny", Reason: d.Reason, ConfigKey: d.ConfigKey}
	switch {
	case d.Allow:
		w.Decision, w.ConfigKey = "allow", ""
	case d.Ask:
		w.Decision = "ask"
		if w.Reason == "" {
			w.Reason = "policy " + registry.name + " asks for approval"
		}
	case w.Reason == "":
		w.Reason = "denied by policy " + registry.name
	}
	b, _ := json.Marshal(w)
	return b
}

// lastFrames keeps the first n lines of a stack, enough to find the panic.
func lastFrames(stack []byte, n int) string {
	lines := strings.SplitN(string(stack), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
