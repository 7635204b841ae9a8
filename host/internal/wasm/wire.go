package wasm

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// The JSON shapes of docs/ABI.md. Field names mirror host/backend in
// snake_case; durations travel as integer milliseconds.

type wireError struct {
	Kind string `json:"kind"`
	// Code is optional (ABI v1 plugins may omit it): a finer cause
	// within Kind, from a closed set (wireCodePolicyFailed).
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// asError turns an error a guest reported into an *Error that keeps its
// kind and code.
func (w *wireError) asError(plugin, op string) error {
	msg := w.Message
	if msg == "" {
		msg = "failed without a message (kind " + w.Kind + ")"
	}
	return &Error{Plugin: plugin, Op: op, Kind: kindFromWire(w.Kind), Code: codeFromWire(w.Kind, w.Code), Msg: msg, Guest: true}
}

// toWireError is the wire form of an error a host function returns.
func toWireError(err error) wireError {
	return wireError{Kind: kindToWire(err), Code: codeToWire(err), Message: err.Error()}
}

// guestError interprets an Extism error_set message: the JSON error object
// of the ABI when it is one, else an internal error with the text.
func guestError(plugin, op, text string) error {
	var env struct {
		Error *wireError `json:"error"`
	}
	if json.Unmarshal([]byte(text), &env) == nil && env.Error != nil {
		return env.Error.asError(plugin, op)
	}
	var w wireError
	if json.Unmarshal([]byte(text), &w) == nil && w.Kind != "" {
		return w.asError(plugin, op)
	}
	return &Error{Plugin: plugin, Op: op, Msg: strings.TrimSpace(text), Guest: true}
}

type errorResponse struct {
	Error wireError `json:"error"`
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

func fromMS(what string, n int64) (time.Duration, error) {
	if n < 0 {
		return 0, backend.Errorf(backend.ErrInvalid, what, "", "timeout_ms must not be negative, got %d", n)
	}
	return time.Duration(n) * time.Millisecond, nil
}

type execRequest struct {
	Argv          []string          `json:"argv"`
	Shell         string            `json:"shell"`
	Cwd           string            `json:"cwd"`
	Env           map[string]string `json:"env"`
	EnvMode       string            `json:"env_mode"`
	Stdin         string            `json:"stdin"`
	TimeoutMS     int64             `json:"timeout_ms"`
	DiscardOutput bool              `json:"discard_output"`
}

func (r execRequest) backend() (backend.ExecRequest, error) {
	t, err := fromMS("exec", r.TimeoutMS)
	return backend.ExecRequest{Argv: r.Argv, Shell: r.Shell, Cwd: r.Cwd, Env: r.Env, EnvMode: backend.EnvMode(r.EnvMode),
		Stdin: r.Stdin, Timeout: t, DiscardOutput: r.DiscardOutput}, err
}

type scriptRequest struct {
	Script        string            `json:"script"`
	Interpreter   string            `json:"interpreter"`
	Cwd           string            `json:"cwd"`
	Env           map[string]string `json:"env"`
	EnvMode       string            `json:"env_mode"`
	TimeoutMS     int64             `json:"timeout_ms"`
	DiscardOutput bool              `json:"discard_output"`
}

func (r scriptRequest) backend() (backend.ScriptRequest, error) {
	t, err := fromMS("exec.script", r.TimeoutMS)
	return backend.ScriptRequest{Script: r.Script, Interpreter: r.Interpreter, Cwd: r.Cwd, Env: r.Env,
		EnvMode: backend.EnvMode(r.EnvMode), Timeout: t, DiscardOutput: r.DiscardOutput}, err
}

type execResult struct {
	ExitCode   int      `json:"exit_code"`
	Stdout     string   `json:"stdout"`
	Stderr     string   `json:"stderr"`
	Command    []string `json:"command"`
	Cwd        string   `json:"cwd"`
	DurationMS int64    `json:"duration_ms"`
	Truncated  bool     `json:"truncated"`
	TimedOut   bool     `json:"timed_out"`
	Signal     int      `json:"signal"`
	Backend    string   `json:"backend"`
	Sandboxed  bool     `json:"sandboxed"`
}

func toExecResult(r backend.ExecResult) execResult {
	cmd := r.Command
	if cmd == nil {
		cmd = []string{}
	}
	return execResult{ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr, Command: cmd, Cwd: r.Cwd,
		DurationMS: ms(r.Duration), Truncated: r.Truncated, TimedOut: r.TimedOut, Signal: r.Signal,
		Backend: r.Backend, Sandboxed: r.Sandboxed}
}

type whichRequest struct {
	Command string `json:"command"`
}

type whichResult struct {
	Command string `json:"command"`
	Path    string `json:"path"`
	Found   bool   `json:"found"`
}

type envVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type envResult struct {
	Vars  []envVar `json:"vars"`
	Cwd   string   `json:"cwd"`
	Shell string   `json:"shell"`
}

func toEnvResult(s backend.EnvSnapshot) envResult {
	out := envResult{Vars: make([]envVar, len(s.Vars)), Cwd: s.Cwd, Shell: s.Shell}
	for i, v := range s.Vars {
		out.Vars[i] = envVar{v.Name, v.Value}
	}
	return out
}

type infoResult struct {
	Backend          string `json:"backend"`
	Sandboxed        bool   `json:"sandboxed"`
	NetworkEnabled   bool   `json:"network_enabled"`
	DefaultTimeoutMS int64  `json:"default_timeout_ms"`
}

type pathRequest struct {
	Path string `json:"path"`
}

type fileInfo struct {
	Path    string `json:"path"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Size    int64  `json:"size"`
	Mode    uint32 `json:"mode"`
	ModTime string `json:"mod_time,omitempty"`
}

func toFileInfo(fi backend.FileInfo) fileInfo {
	out := fileInfo{Path: fi.Path, Name: fi.Name, Kind: string(fi.Kind), Size: fi.Size, Mode: uint32(fi.Mode.Perm())}
	if !fi.ModTime.IsZero() {
		out.ModTime = fi.ModTime.UTC().Format(time.RFC3339Nano)
	}
	return out
}

type listResult struct {
	Entries   []fileInfo `json:"entries"`
	Truncated bool       `json:"truncated"`
}

type readRequest struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

type readResult struct {
	Path       string   `json:"path"`
	Offset     int      `json:"offset"`
	Lines      []string `json:"lines"`
	TotalLines int      `json:"total_lines"`
	Truncated  bool     `json:"truncated"`
}

type writeRequest struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Mode    string `json:"mode"`
}

type writeResult struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created"`
}

type editRequest struct {
	Path       string `json:"path"`
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all"`
}

type editResult struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
}

type globRequest struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

type globResult struct {
	Paths     []string `json:"paths"`
	Truncated bool     `json:"truncated"`
}

type grepRequest struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Glob    string `json:"glob"`
}

type grepMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

type grepResult struct {
	Matches   []grepMatch `json:"matches"`
	Truncated bool        `json:"truncated"`
}

type removeRequest struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive"`
}

type removeResult struct {
	Removed int `json:"removed"`
}

type logRequest struct {
	Level   string         `json:"level"`
	Message string         `json:"message"`
	Attrs   map[string]any `json:"attrs"`
}

type lifecycleState struct {
	Name       string `json:"name"`
	Running    bool   `json:"running"`
	StartedAt  string `json:"started_at,omitempty"`
	LastUsedAt string `json:"last_used_at,omitempty"`
	JobsEnded  int    `json:"jobs_ended,omitempty"`
}

func toLifecycleState(s backend.LifecycleState) lifecycleState {
	out := lifecycleState{Name: s.Name, Running: s.Running, JobsEnded: s.JobsEnded}
	if !s.StartedAt.IsZero() {
		out.StartedAt = s.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	if !s.LastUsedAt.IsZero() {
		out.LastUsedAt = s.LastUsedAt.UTC().Format(time.RFC3339Nano)
	}
	return out
}

type empty struct{}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
