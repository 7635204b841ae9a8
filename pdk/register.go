package pdk

import (
	"bytes"
	"encoding/json"

	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"time"
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

// Policy actions: what a CheckRequest asks about.
const (
	ActionShellExec      = "shell.exec"
	ActionShellScript    = "shell.script"
	ActionFSWrite        = "fs.write"
	ActionFSEdit         = "fs.edit"
	ActionFSRemove       = "fs.remove"
	ActionLifecycleStart = "lifecycle.start"
	ActionLifecycleStop  = "lifecycle.stop"
	// The containers operations: "containers." and the operation.
	ActionContainersCreate     = "containers.create"
	ActionContainersDestroyAll = "containers.destroy_all"
	// ActionContainersRestore creates a container from a snapshot: a
	// policy gating creates gates it too.
	ActionContainersRestore = "containers.restore"
	// ActionContainersCreateNetwork makes a network; with Egress, one
	// with a route out.
	ActionContainersCreateNetwork = "containers.create_network"
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

// CheckRequest is what a policy is asked: may this action happen?
type CheckRequest struct {
	Action  string   `json:"action"`
	Command []string `json:"command,omitempty"` // argv, or ["/bin/sh","-c",shell]
	Shell   string   `json:"shell,omitempty"`   // the shell string, when the command is one
	Script  string   `json:"script,omitempty"`  // shell.script: the script text
	Cwd     string   `json:"cwd,omitempty"`
	EnvKeys []string `json:"env_keys,omitempty"`
	Path    string   `json:"path,omitempty"` // fs.*: the path concerned, as requested
	// ResolvedPath (fs.write, fs.edit, fs.remove): the entry the mutation
	// changes, relative to the workspace root: Path with every symlink
	// followed inside the workspace, chroot-style (the last element too,
	// except for fs.remove). Chroot-style is not how the workspace's
	// commands follow them: an absolute target "/x" means the workspace's
	// "x" here, the system's /x in a shell; a link among the parent
	// directories that leads nowhere in the workspace fails the call
	// before any policy is asked, and so does a last element that is
	// absolute or climbs out and whose target the workspace lacks (a
	// relative link inside is written through, creating its target).
	// Judge both:
	// with "p -> protected", Path is "p/new" and ResolvedPath
	// "protected/new".
	ResolvedPath string `json:"resolved_path,omitempty"`
	Tool         string `json:"tool,omitempty"` // the tool whose call caused it, if any
	Session      string `json:"session,omitempty"`
	// Container describes a containers.* action (never an environment
	// value). On a shell.exec it says the command runs in that managed
	// container (Operation exec, exec_background or create; Container its
	// name, "" for a create that generates one), not in the session's
	// sandbox; Cwd is then the container's directory. nil for the others.
	// A command policy that ignores it judges container commands as
	// session ones.
	Container *ContainerCheck `json:"container,omitempty"`
}

// ContainerCheck is what a containers.* action asks for (docs/ABI.md).
type ContainerCheck struct {
	Operation      string   `json:"operation"`
	Container      string   `json:"container,omitempty"`
	Image          string   `json:"image,omitempty"`
	Network        string   `json:"network,omitempty"`
	MountPaths     []string `json:"mount_paths,omitempty"`
	EnvPassthrough string   `json:"env_passthrough,omitempty"` // auto, all, none or list
	ForwardGit     bool     `json:"forward_git,omitempty"`
	ForwardGh      bool     `json:"forward_gh,omitempty"`
	ForwardSSH     bool     `json:"forward_ssh,omitempty"`
	GPU            bool     `json:"gpu,omitempty"`
	Persistent     bool     `json:"persistent,omitempty"`
	Count          int      `json:"count"`              // the session's containers now
	Snapshot       string   `json:"snapshot,omitempty"` // snapshot, restore, delete_snapshot
	// DotfilesRepo is the dotfiles repository a create clones, any
	// secret in it masked.
	DotfilesRepo string `json:"dotfiles_repo,omitempty"`
	// Egress: create_network asks for a route out. Project and Service:
	// the compose service a create (or compose_*) is for.
	Egress  bool   `json:"egress,omitempty"`
	Project string `json:"project,omitempty"`
	Service string `json:"service,omitempty"`
	// DockerfileBuild: a try-repo create on a backend that builds
	// Dockerfiles; the repository's RUN steps may run in a build
	// container.
	DockerfileBuild bool `json:"dockerfile_build,omitempty"`
	// RepoURL is the repository a try-repo create clones (a file:// one
	// is also among MountPaths).
	RepoURL string `json:"repo_url,omitempty"`
}

// Decision is a policy's answer: allow, deny, or ask a person.
type Decision struct {
	Allow bool
	// Ask asks a person to approve the action; Reason says why. Where
	// nobody can be asked (a client without MCP elicitation, the CLI),
	// the kernel denies it.
	Ask    bool
	Reason string
	// ConfigKey optionally names the key of the policy's config that
	// would allow the action without asking; refusals point to it.
	ConfigKey string
}

// Allow allows the action.
func Allow() Decision { return Decision{Allow: true} }

// Deny refuses the action; the reason reaches the caller.
func Deny(format string, args ...any) Decision {
	return Decision{Reason: fmt.Sprintf(format, args...)}
}

// Ask asks a person to approve the action (once, or for the session):
// the reason is shown to them, and configKey (may be empty) names the
// policy config key that would allow it without asking.
func Ask(configKey, format string, args ...any) Decision {
	return Decision{Ask: true, Reason: fmt.Sprintf(format, args...), ConfigKey: configKey}
}

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
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil {
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
