package pdk

import (
	"encoding/json"
	"time"

	"github.com/wai-dev/wai/pdk/internal/imports"
)

// callHost sends req to a host function and decodes its answer into resp,
// or returns the host's error as an *Error that keeps its kind.
func callHost(name string, fn func([]byte) []byte, req, resp any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return Errorf(KindInvalid, "%s: cannot encode the request: %v", name, err)
	}
	out := fn(b)
	if out == nil {
		return Errorf(KindInternal, "%s: the host could not allocate its response (plugin memory exhausted?)", name)
	}
	var probe struct {
		Error *Error `json:"error"`
	}
	if err := json.Unmarshal(out, &probe); err != nil {
		return Errorf(KindInternal, "%s: the host answered something that is not JSON: %v", name, err)
	}
	if e := probe.Error; e != nil {
		if _, known := sentinels[e.Kind]; !known {
			e.Kind = KindInternal
		}
		return e
	}
	if resp != nil {
		if err := json.Unmarshal(out, resp); err != nil {
			return Errorf(KindInternal, "%s: cannot decode the host's answer: %v", name, err)
		}
	}
	return nil
}

// ShellClient runs commands in the session's workspace (capability
// "shell"). Use the package variable Shell.
type ShellClient struct{}

// Shell is the session's shell.
var Shell ShellClient

// Exec runs one command. A non-zero exit or a timeout is a result, not an
// error; errors are for commands that could not run (ErrInvalid), that a
// policy refused (ErrPermission) or a backend that is down (ErrUnavailable).
func (ShellClient) Exec(req ExecRequest) (ExecResult, error) {
	var w wireExecResult
	err := callHost("wai_shell_exec", imports.ShellExec, wireExecRequest{Argv: req.Argv, Shell: req.Shell, Cwd: req.Cwd,
		Env: req.Env, EnvMode: req.EnvMode, Stdin: req.Stdin, TimeoutMS: ms(req.Timeout), DiscardOutput: req.DiscardOutput}, &w)
	if err != nil {
		return ExecResult{}, err
	}
	return w.result(), nil
}

// Script runs a script with an interpreter (default /bin/sh).
func (ShellClient) Script(req ScriptRequest) (ExecResult, error) {
	var w wireExecResult
	err := callHost("wai_shell_script", imports.ShellScript, wireScriptRequest{Script: req.Script, Interpreter: req.Interpreter,
		Cwd: req.Cwd, Env: req.Env, EnvMode: req.EnvMode, TimeoutMS: ms(req.Timeout), DiscardOutput: req.DiscardOutput}, &w)
	if err != nil {
		return ExecResult{}, err
	}
	return w.result(), nil
}

// Which looks a command up on the PATH of the workspace.
func (ShellClient) Which(command string) (WhichResult, error) {
	var w wireWhich
	if err := callHost("wai_shell_which", imports.ShellWhich, wireWhich{Command: command}, &w); err != nil {
		return WhichResult{}, err
	}
	return WhichResult{Command: w.Command, Path: w.Path}, nil
}

// Env returns the environment commands start with.
func (ShellClient) Env() (EnvSnapshot, error) {
	var w wireEnv
	if err := callHost("wai_shell_env", imports.ShellEnv, struct{}{}, &w); err != nil {
		return EnvSnapshot{}, err
	}
	s := EnvSnapshot{Cwd: w.Cwd, Shell: w.Shell, Vars: make([]EnvVar, len(w.Vars))}
	for i, v := range w.Vars {
		s.Vars[i] = EnvVar{v.Name, v.Value}
	}
	return s, nil
}

// Info describes the shell: which backend, whether it is sandboxed.
func (ShellClient) Info() (ShellInfo, error) {
	var w wireInfo
	if err := callHost("wai_shell_info", imports.ShellInfo, struct{}{}, &w); err != nil {
		return ShellInfo{}, err
	}
	return ShellInfo{Backend: w.Backend, Sandboxed: w.Sandboxed, NetworkEnabled: w.NetworkEnabled,
		DefaultTimeout: time.Duration(w.DefaultTimeoutMS) * time.Millisecond}, nil
}

// FSClient reads (capability "fs.read") and changes (capability
// "fs.write") the session's workspace. Use the package variable FS.
type FSClient struct{}

// FS is the session's filesystem.
var FS FSClient

// Stat describes one path (following symlinks inside the workspace).
func (FSClient) Stat(path string) (FileInfo, error) {
	var w wireFileInfo
	if err := callHost("wai_fs_stat", imports.FSStat, wirePath{path}, &w); err != nil {
		return FileInfo{}, err
	}
	return w.info(), nil
}

// List returns the entries of a directory, sorted by name.
func (FSClient) List(path string) (ListResult, error) {
	var w wireList
	if err := callHost("wai_fs_list", imports.FSList, wirePath{path}, &w); err != nil {
		return ListResult{}, err
	}
	out := ListResult{Entries: make([]FileInfo, len(w.Entries)), Truncated: w.Truncated}
	for i, e := range w.Entries {
		out.Entries[i] = e.info()
	}
	return out, nil
}

// Read returns lines of a text file.
func (FSClient) Read(req ReadRequest) (ReadResult, error) {
	var w wireReadResult
	if err := callHost("wai_fs_read", imports.FSRead, wireReadRequest(req), &w); err != nil {
		return ReadResult{}, err
	}
	return ReadResult(w), nil
}

// Write writes a file (create by default: an existing file is ErrExist).
func (FSClient) Write(req WriteRequest) (WriteResult, error) {
	var w wireWriteResult
	if err := callHost("wai_fs_write", imports.FSWrite, wireWriteRequest(req), &w); err != nil {
		return WriteResult{}, err
	}
	return WriteResult(w), nil
}

// Edit replaces exact text in a file.
func (FSClient) Edit(req EditRequest) (EditResult, error) {
	var w wireEditResult
	if err := callHost("wai_fs_edit", imports.FSEdit, wireEditRequest(req), &w); err != nil {
		return EditResult{}, err
	}
	return EditResult(w), nil
}

// Glob lists files matching a pattern.
func (FSClient) Glob(req GlobRequest) (GlobResult, error) {
	var w wireGlobResult
	if err := callHost("wai_fs_glob", imports.FSGlob, wireGlobRequest(req), &w); err != nil {
		return GlobResult{}, err
	}
	return GlobResult(w), nil
}

// Grep searches text files for a regular expression.
func (FSClient) Grep(req GrepRequest) (GrepResult, error) {
	var w wireGrepResult
	if err := callHost("wai_fs_grep", imports.FSGrep, wireGrepRequest(req), &w); err != nil {
		return GrepResult{}, err
	}
	out := GrepResult{Matches: make([]GrepMatch, len(w.Matches)), Truncated: w.Truncated}
	for i, m := range w.Matches {
		out.Matches[i] = GrepMatch{Path: m.Path, Line: m.Line, Text: m.Text}
	}
	return out, nil
}

// Remove removes a path (a non-empty directory needs Recursive).
func (FSClient) Remove(req RemoveRequest) (RemoveResult, error) {
	var w wireRemoveResult
	if err := callHost("wai_fs_remove", imports.FSRemove, wireRemoveRequest(req), &w); err != nil {
		return RemoveResult{}, err
	}
	return RemoveResult(w), nil
}

// LifecycleClient starts and stops the session's sandbox (capability
// "lifecycle"); backends without one answer ErrUnavailable.
type LifecycleClient struct{}

// Lifecycle is the session's sandbox lifecycle.
var Lifecycle LifecycleClient

// Start starts the sandbox (a no-op when it runs).
func (LifecycleClient) Start() (LifecycleState, error) {
	return lifecycle("wai_lifecycle_start", imports.LifecycleStart)
}

// Stop removes the sandbox; its files stay and the next use starts a new one.
func (LifecycleClient) Stop() (LifecycleState, error) {
	return lifecycle("wai_lifecycle_stop", imports.LifecycleStop)
}

// State describes the sandbox.
func (LifecycleClient) State() (LifecycleState, error) {
	return lifecycle("wai_lifecycle_state", imports.LifecycleState)
}

func lifecycle(name string, fn func([]byte) []byte) (LifecycleState, error) {
	var w wireLifecycle
	if err := callHost(name, fn, struct{}{}, &w); err != nil {
		return LifecycleState{}, err
	}
	return w.state(), nil
}

// ContainersClient manages containers beside the session's sandbox
// (capability "containers"). Use the package variable Containers.
type ContainersClient struct{}

// Containers runs containers operations.
var Containers ContainersClient

// Do sends one containers request (the containers tool's input, see
// docs/containers.md) and decodes the kernel's response into resp. The
// kernel checks it and passes it through the policy chain first.
func (ContainersClient) Do(req any, resp any) error {
	return callHost("wai_containers", imports.Containers, req, resp)
}

// LogLevel is the level of a Log record.
type LogLevel string

const (
	LevelDebug LogLevel = "debug"
	LevelInfo  LogLevel = "info"
	LevelWarn  LogLevel = "warn"
	LevelError LogLevel = "error"
)

// Log writes a record to the host's log (always allowed). kv are
// alternating keys and values, as in log/slog.
func Log(level LogLevel, msg string, kv ...any) error {
	req := wireLog{Level: string(level), Message: msg}
	if len(kv) > 0 {
		req.Attrs = make(map[string]any, len(kv)/2+1)
		for i := 0; i < len(kv); i += 2 {
			key, ok := kv[i].(string)
			if !ok {
				key = "!BADKEY"
			}
			if i+1 < len(kv) {
				req.Attrs[key] = kv[i+1]
			} else {
				req.Attrs["!BADKEY"] = kv[i]
			}
		}
	}
	return callHost("wai_log", imports.Log, req, nil)
}
