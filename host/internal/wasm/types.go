package wasm

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// ABIVersion is the version of docs/ABI.md this runtime speaks.
const ABIVersion = 1

// Defaults of Options.
const (
	DefaultSessionConcurrentCalls = 8
	// DefaultMemoryBudgetBytes fits 64 sessions each holding three
	// instances of about 10 MiB (a bundled plugin after a few calls).
	DefaultMemoryBudgetBytes int64 = 2 << 30
)

// Options configure a Runtime. Zero values get the defaults noted.
type Options struct {
	// CacheDir holds wazero's compilation cache (${cache}/wasm). Empty
	// means an in-memory cache only: every process compiles again.
	CacheDir string
	// MemoryLimitPages caps each guest memory, in 64 KiB pages (default
	// 1024 = 64 MiB). It applies to the plugin's own memory and to the
	// Extism kernel memory that carries inputs and outputs.
	MemoryLimitPages uint32
	// PoolSize caps the instances of one plugin's shared pool (default
	// 8), which serves describe and the policy checks made outside a
	// session's tool call; later ones wait for a free instance. Tool calls
	// run on their session's own instances (Scope).
	PoolSize int
	// SessionConcurrentCalls caps the tool calls one Scope runs at once
	// (default 8); one more waits for a slot until its deadline, then
	// fails with ErrInvalid (a limit broken) and ErrSessionBusy.
	SessionConcurrentCalls int
	// MemoryBudgetBytes caps the guest memory of all instances together
	// (default DefaultMemoryBudgetBytes). An instance that does not fit
	// fails with ErrUnavailable once idle instances are closed to make
	// room; a guest whose memory.grow does not fit traps, and the call
	// fails the same way.
	MemoryBudgetBytes int64
	// IdleInstanceTimeout closes instances unused for longer (default
	// 2 min).
	IdleInstanceTimeout time.Duration
	// CallTimeout bounds a call whose context and request carry no
	// deadline (default 30 s), so no guest code runs unbounded.
	CallTimeout time.Duration
	// CheckTimeout bounds a policy check likewise (default 5 s).
	CheckTimeout time.Duration
	// MaxOutputBytes caps what one export may return (default 4 MiB);
	// more is ErrInvalid.
	MaxOutputBytes int
	// MaxRequestBytes caps one host-function request read from guest
	// memory (default 1 MiB); more gets an invalid error response.
	MaxRequestBytes int
	// Logger receives wai_log records and runtime events; nil discards.
	Logger *slog.Logger

	// interruptOff turns WithCloseOnContextDone off; only the benchmark
	// that measures what interruptibility costs sets it.
	interruptOff bool
}

// Source names a plugin to load and what it is allowed to do.
type Source struct {
	Path  string // a .wasm file; or
	Bytes []byte // the module itself (exactly one of Path and Bytes)
	// SHA256 pins the module (hex); a mismatch fails Load.
	SHA256 string
	// Grants are the capabilities config grants ("shell", "fs.read",
	// "fs.write", "lifecycle"); the plugin gets those it also declares.
	Grants []string
	// Bundled plugins ship with wai and get every capability they declare.
	Bundled bool
	// Config is the Extism plugin config (config_get in the guest).
	Config map[string]string
	// Name is used in messages until the plugin has named itself.
	Name string
	// Kind is the kind of plugin the caller expects (KindTool or
	// KindPolicy; "" takes either). A plugin of the other kind fails to
	// load before its imports are held against Grants: a tool plugin put
	// under [[policies]] must hear where it belongs, not be told to ask
	// for a grant that section cannot give.
	Kind string
}

// Plugin kinds.
const (
	KindTool   = "tool"
	KindPolicy = "policy"
)

// Capabilities a plugin can declare and config can grant.
const (
	CapShell     = "shell"     // wai_shell_*
	CapFSRead    = "fs.read"   // wai_fs_stat|list|read|glob|grep
	CapFSWrite   = "fs.write"  // wai_fs_write|edit|remove
	CapLifecycle = "lifecycle" // wai_lifecycle_*
	// CapContainers: wai_containers, agent-managed containers. Only the
	// bundled containers tool gets it without a grant.
	CapContainers = "containers"
	CapLog        = "log" // wai_log; always granted
)

// Description is what a plugin says about itself in wai_describe.
type Description struct {
	ABI          int        `json:"abi"`
	Name         string     `json:"name"`
	Version      string     `json:"version"`
	Kind         string     `json:"kind"`
	Tools        []ToolSpec `json:"tools,omitempty"`
	Capabilities []string   `json:"capabilities,omitempty"`
	// Actions a policy wants to judge (empty: all); the kernel may skip
	// the policy for others.
	Actions []string `json:"actions,omitempty"`
	// Granted is what the plugin may actually use: declared ∩ grants (or
	// declared, for a bundled plugin), plus log. Set by Load.
	Granted []string `json:"-"`
}

// ToolSpec describes one tool of a tool plugin.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// OutputSchema, when present, is the JSON Schema (an object schema)
	// of the tool's result values.
	OutputSchema json.RawMessage  `json:"output_schema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
}

// ToolAnnotations are hints about a tool's behaviour, as MCP defines them.
// Pointers are hints whose default is true.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"read_only_hint,omitempty"`
	DestructiveHint *bool  `json:"destructive_hint,omitempty"`
	IdempotentHint  bool   `json:"idempotent_hint,omitempty"`
	OpenWorldHint   *bool  `json:"open_world_hint,omitempty"`
}

// Env is what host functions reach during one call. The kernel builds it
// per call, already guarded by limits and policies; this package adds only
// capability grants and bounds.
type Env interface {
	Shell() backend.Shell
	FS() backend.Filesystem
	Lifecycle() backend.Lifecycle // nil when the workspace has none
	Session() string
}

// ContainersEnv is implemented by an Env whose session can manage
// containers: the kernel decodes req (the containers tool's input, as
// JSON), checks it and answers with a JSON-encodable response.
type ContainersEnv interface {
	Containers(ctx context.Context, req []byte) (any, error)
}

// ToolCall is one call of wai_call.
type ToolCall struct {
	// Scope is the session's set of instances the call runs on. Nil gives
	// the call a fresh instance of its own, closed after it.
	Scope   *Scope
	Tool    string
	Params  json.RawMessage
	CallID  string
	Session string
	// Deadline, when set, shortens the context's deadline (never extends it).
	Deadline time.Time
}

// ToolResult is what a tool answered. A failed result (OK false) is an
// answer for the model, not an error.
type ToolResult struct {
	OK      bool
	Message string
	Value   json.RawMessage // JSON, or nil
}

// Policy actions: what a CheckRequest asks about.
const (
	ActionShellExec      = "shell.exec"
	ActionShellScript    = "shell.script"
	ActionFSWrite        = "fs.write"
	ActionFSEdit         = "fs.edit"
	ActionFSRemove       = "fs.remove"
	ActionLifecycleStart = "lifecycle.start"
	ActionLifecycleStop  = "lifecycle.stop"
)

// ContainerActions are the containers operations' actions
// ("containers.<operation>").
var ContainerActions = []string{"containers.preflight", "containers.create", "containers.exec", "containers.exec_interactive_hint",
	"containers.list", "containers.status", "containers.start", "containers.stop", "containers.destroy", "containers.destroy_all", "containers.copy_in", "containers.copy_out",
	"containers.exec_background", "containers.exec_poll", "containers.exec_cancel",
	"containers.snapshot", "containers.restore", "containers.list_snapshots", "containers.delete_snapshot",
	"containers.create_network", "containers.destroy_network", "containers.list_networks",
	"containers.compose_up", "containers.compose_down", "containers.compose_status"}

// CheckRequest is one question to a policy (wai_check).
type CheckRequest struct {
	Action  string   `json:"action"`
	Command []string `json:"command,omitempty"` // argv, or ["/bin/sh","-c",shell]
	Shell   string   `json:"shell,omitempty"`   // the shell string when there is one
	Script  string   `json:"script,omitempty"`  // shell.script: the script text
	Cwd     string   `json:"cwd,omitempty"`
	EnvKeys []string `json:"env_keys,omitempty"`
	Path    string   `json:"path,omitempty"`
	// ResolvedPath: fs mutations, the entry changed (Path with symlinks
	// followed, workspace-relative).
	ResolvedPath string `json:"resolved_path,omitempty"`
	Tool         string `json:"tool,omitempty"` // the tool whose call caused the request, if any
	Session      string `json:"session,omitempty"`
	// Container: containers.* actions, what the operation asks for; on
	// shell.exec, the managed container the command runs in.
	Container json.RawMessage `json:"container,omitempty"`
}

// Decision is a policy's answer: allow, deny, or (Ask) ask a person.
type Decision struct {
	Allow bool
	Ask   bool // ask a person; Reason is why
	// Reason reaches the caller; for Ask it is the question's why.
	Reason string
	// ConfigKey names the policy config key that would allow the action.
	ConfigKey string
}
