package backend

import (
	"context"
	"sort"
	"strconv"
	"time"
)

// Shell runs commands in a workspace. Implementations validate every request
// against their Limits (ErrInvalid before anything runs), kill the whole
// process tree of a command that outlives its timeout, and keep captured
// output bounded however much a command prints.
//
// A timeout is not an error: the result says TimedOut, ExitCode 124 and the
// signal that ended it, with the partial output. A non-zero exit is not an
// error either. Errors are for requests that could not run at all.
type Shell interface {
	Execute(ctx context.Context, req ExecRequest) (ExecResult, error)
	ExecuteScript(ctx context.Context, req ScriptRequest) (ExecResult, error)
	Which(ctx context.Context, command string) (WhichResult, error)
	Env(ctx context.Context) (EnvSnapshot, error)
	// Info describes the shell. It may open the workspace (a container start)
	// to find out, so it takes a context and can fail.
	Info(ctx context.Context) (Info, error)
}

// EnvMode says how ExecRequest.Env combines with the workspace environment.
type EnvMode string

const (
	// EnvExtend (the default) merges the given variables over the
	// workspace's environment.
	EnvExtend EnvMode = "extend"
	// EnvReplace keeps only PATH plus the given variables.
	EnvReplace EnvMode = "replace"
)

// ExecRequest is one command. Exactly one of Argv (run directly, no shell
// interpretation) and Shell (run with /bin/sh -c) is set.
type ExecRequest struct {
	Argv  []string
	Shell string
	// Cwd is relative to the workspace root, or absolute inside it; empty
	// means the root. It never resolves outside the workspace.
	Cwd     string
	Env     map[string]string
	EnvMode EnvMode
	Stdin   string
	// Timeout of zero means the limits' default; otherwise it must lie in
	// [Limits.MinTimeout, Limits.MaxTimeout].
	Timeout time.Duration
	// DiscardOutput drops stdout and stderr instead of capturing them.
	DiscardOutput bool
	// Output, when not nil, receives the command's output as it is
	// produced, before the command ends (see OutputFunc). The result
	// still carries the captured, capped output.
	Output OutputFunc
}

// Stream names one of a command's output streams.
type Stream int

const (
	Stdout Stream = 1
	Stderr Stream = 2
)

// String returns "stdout" or "stderr".
func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	}
	return "stream(" + strconv.Itoa(int(s)) + ")"
}

// OutputFunc receives a chunk of a running command's output, as the
// command writes it, so a front end can show a long command's progress.
//
// A backend calls it from one goroutine at a time per command (calls never
// overlap), in the order the bytes were read from each stream (the two
// streams' relative order is as the backend read them), and never after
// Execute or ExecuteScript returns; p is only valid during the call. It must
// return promptly: a slow sink slows the command's output (its pipe fills),
// it never grows the backend's memory.
//
// Chunks are the raw bytes the command wrote, not yet made valid UTF-8 nor
// capped: the sink sees output the result's cap drops, so it bounds what it
// keeps itself. With DiscardOutput it is never called. A backend that
// cannot stream (its conformance Caps say Streaming=false) hands the output
// over when the command has ended, still before returning.
type OutputFunc func(stream Stream, p []byte)

// Command returns the argv the request runs: Argv, or the shell invocation.
func (r ExecRequest) Command() []string {
	if r.Shell != "" {
		return []string{"/bin/sh", "-c", r.Shell}
	}
	return r.Argv
}

// ScriptRequest runs Script, written to a temporary file in the workspace,
// with Interpreter (default DefaultInterpreter).
type ScriptRequest struct {
	Script        string
	Interpreter   string
	Cwd           string
	Env           map[string]string
	EnvMode       EnvMode
	Timeout       time.Duration
	DiscardOutput bool
	Output        OutputFunc // as in ExecRequest
}

// DefaultInterpreter runs scripts that name no interpreter. /bin/sh rather
// than /bin/bash, which wai's predecessors used: every image and host has it.
const DefaultInterpreter = "/bin/sh"

// TimeoutExitCode is the exit code of a command killed at its timeout, as
// coreutils timeout(1) reports it.
const TimeoutExitCode = 124

// ExecResult is what one command did. Stdout and Stderr are valid UTF-8
// (invalid bytes replaced) and bounded by Limits.MaxOutputBytes each, with
// head and tail kept around a "[truncated" marker.
type ExecResult struct {
	ExitCode  int
	Stdout    string
	Stderr    string
	Command   []string
	Cwd       string // the directory the command ran in, as the backend names it
	Duration  time.Duration
	Truncated bool // stdout or stderr lost bytes to the output limit
	TimedOut  bool
	Signal    int // the signal that ended the process, 0 if none
	// Backend and Sandboxed say where the command ran, so a result that
	// came from an unsandboxed fallback says so wherever it travels.
	Backend   string
	Sandboxed bool
}

// Success reports a zero exit code within the timeout.
func (r ExecResult) Success() bool { return r.ExitCode == 0 && !r.TimedOut }

// WhichResult is the answer to a command lookup.
type WhichResult struct {
	Command string
	Path    string // empty when not found
}

// Found reports whether the command was found.
func (w WhichResult) Found() bool { return w.Path != "" }

// EnvVar is one environment variable.
type EnvVar struct{ Name, Value string }

// EnvSnapshot is the environment commands start with.
type EnvSnapshot struct {
	Vars  []EnvVar // sorted by name
	Cwd   string
	Shell string
}

// NewEnvSnapshot builds a snapshot from a map, sorting the variables.
func NewEnvSnapshot(vars map[string]string, cwd, shell string) EnvSnapshot {
	s := EnvSnapshot{Cwd: cwd, Shell: shell, Vars: make([]EnvVar, 0, len(vars))}
	for k, v := range vars {
		s.Vars = append(s.Vars, EnvVar{k, v})
	}
	sort.Slice(s.Vars, func(i, j int) bool { return s.Vars[i].Name < s.Vars[j].Name })
	return s
}

// Get returns the value of name and whether it is set.
func (s EnvSnapshot) Get(name string) (string, bool) {
	for _, v := range s.Vars {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

// Map returns the variables as a fresh map.
func (s EnvSnapshot) Map() map[string]string {
	m := make(map[string]string, len(s.Vars))
	for _, v := range s.Vars {
		m[v.Name] = v.Value
	}
	return m
}

// Info describes a shell.
type Info struct {
	Backend        string // "podman", "host", "mock"
	Sandboxed      bool   // isolated from the host system
	NetworkEnabled bool
	DefaultTimeout time.Duration
}
