package agentproto

// Background jobs (docs/AGENT.md, "Background jobs"): `wai-agent job run
// SPEC` supervises one job, started by the host as a detached exec of its
// own so that it outlives the agent and the host process; `wai-agent job
// status|cancel|list` are short execs that print one JSON document. The
// host bounds every read of them and checks every field.

// JobDir is where the jobs' directories live in the container: the /tmp
// tmpfs, outside /workspace.
const JobDir = "/tmp/.wai-jobs"

// JobSpec is what `job run` runs; the host passes it base64-encoded JSON
// as the one argument after "run".
type JobSpec struct {
	ID           string            `json:"id"`
	Argv         []string          `json:"argv"`
	Cwd          string            `json:"cwd"`
	Env          map[string]string `json:"env,omitempty"`
	EnvMode      string            `json:"env_mode,omitempty"`
	Path         string            `json:"path,omitempty"`
	Marker       string            `json:"marker"`
	MaxRuntimeMS int64             `json:"max_runtime_ms"`
	GraceMS      int64             `json:"grace_ms"`
	Budget       int               `json:"budget"` // ring bytes per stream
}

// JobInfo is a job as the agent sees it. State is one of running,
// exited, timed_out, cancelled, lost.
type JobInfo struct {
	ID           string   `json:"id"`
	Command      []string `json:"command"`
	Cwd          string   `json:"cwd"`
	State        string   `json:"state"`
	ExitCode     int      `json:"exit_code"`
	Signal       int      `json:"signal"`
	StartedNS    int64    `json:"started_ns"`
	EndedNS      int64    `json:"ended_ns"`
	MaxRuntimeMS int64    `json:"max_runtime_ms"`
}

// JobStream is a window of one output stream: Data (raw bytes, at most
// the max asked for) starts at Offset; Skipped bytes before it were
// dropped; Total bytes were written in all.
type JobStream struct {
	Data    []byte `json:"data"`
	Offset  int64  `json:"offset"`
	Skipped int64  `json:"skipped"`
	Total   int64  `json:"total"`
}

// JobStatus is what `job status` prints.
type JobStatus struct {
	Job    JobInfo   `json:"job"`
	Stdout JobStream `json:"stdout"`
	Stderr JobStream `json:"stderr"`
}
