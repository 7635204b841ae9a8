package agentproto

// Hello opens the connection. The host sends Versions (the versions it
// speaks); the agent answers with the one it chose in Version, its own
// pid, and the name of its build. An agent that speaks none of Versions
// answers with an Error frame and exits.
type Hello struct {
	Versions []int  `json:"versions,omitempty"` // host → agent
	Version  int    `json:"version,omitempty"`  // agent → host
	PID      int    `json:"pid,omitempty"`      // agent → host
	Agent    string `json:"agent,omitempty"`    // agent → host, e.g. "wai-agent/1"
}

// Env modes of an Exec.
const (
	EnvExtend  = "extend"  // the agent's environment, then Env over it
	EnvReplace = "replace" // PATH=Path, then Env
)

// Exec starts a command under a fresh id. The agent runs Argv (the first
// element looked up on the PATH of the command's environment) in its own
// session, with Cwd as working directory; Marker ("NAME=VALUE") is added
// to its environment last, so no Env entry can override it (not under
// EnvReplace, which keeps only PATH and Env: the tree is then found
// through the command's session and parents). With Script
// set the agent writes it to a private file under /tmp and appends the
// file's path to Argv, removing the file after the command. Stdin is
// written to the command's standard input, which is then closed (empty:
// closed at once).
type Exec struct {
	Argv    []string          `json:"argv"`
	Env     map[string]string `json:"env,omitempty"`
	EnvMode string            `json:"env_mode,omitempty"` // EnvExtend when empty
	Path    string            `json:"path,omitempty"`     // PATH under EnvReplace when Env has none
	Marker  string            `json:"marker"`
	Cwd     string            `json:"cwd"`
	Stdin   []byte            `json:"stdin,omitempty"`
	Script  []byte            `json:"script,omitempty"`
	// TimeoutMS is the command's timeout; at it the agent sends the tree
	// SIGTERM, then SIGKILL after GraceMS.
	TimeoutMS int64 `json:"timeout_ms"`
	GraceMS   int64 `json:"grace_ms"`
	// Discard drops the output instead of sending Stdout/Stderr frames.
	Discard bool `json:"discard,omitempty"`
	// KeepBackground leaves running what the command left behind when it
	// exited by itself; otherwise the agent kills it before Exit.
	KeepBackground bool `json:"keep_background,omitempty"`
}

// Cancel stops command id: its tree gets SIGTERM, then SIGKILL after
// GraceMS (0: SIGKILL at once). The command still ends with Exit.
type Cancel struct {
	GraceMS int64 `json:"grace_ms"`
}

// Started says command id runs: its process and that process's start time
// (clock ticks since boot, field 22 of /proc/PID/stat), which identify it
// to a kill from outside the agent. It comes before the command's first
// output, or once the command has run a few milliseconds; a command that
// ends sooner without output gets no Started, only its Exit.
type Started struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// Exit is how command id ended. Code is its exit status, 128+N for a
// command ended by signal N (as a shell reports it); Signal is the last
// signal the agent sent its tree (0: none). TimedOut says the agent's
// timeout ended it, Cancelled that a Cancel did. Killed is what the
// cleanup found: "none", "term N" or "kill N" processes.
type Exit struct {
	Code       int    `json:"code"`
	Signal     int    `json:"signal,omitempty"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	Cancelled  bool   `json:"cancelled,omitempty"`
	DurationNS int64  `json:"duration_ns"`
	Killed     string `json:"killed,omitempty"`
}

// Error says command id could not be started (no Exit follows), or, with
// id 0, that the agent gives up on the connection.
type Error struct {
	Message string `json:"message"`
}
