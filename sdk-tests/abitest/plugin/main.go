// Command plugin is the ABI conformance plugin: one tool per host
// function, each passing its params to the pdk client and answering what
// came back in the JSON shape docs/ABI.md gives the host function's
// response. The suite (package abitest) compares those answers with what
// the backend itself returns, so any loss or distortion on the way through
// the runtime, the ABI and the pdk shows.
package main

import (
	"errors"
	"time"

	"github.com/wai-dev/wai/pdk"
)

type execParams struct {
	Argv          []string          `json:"argv,omitempty"`
	Shell         string            `json:"shell,omitempty"`
	Cwd           string            `json:"cwd,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	EnvMode       string            `json:"env_mode,omitempty"`
	Stdin         string            `json:"stdin,omitempty"`
	TimeoutMS     int64             `json:"timeout_ms,omitempty"`
	DiscardOutput bool              `json:"discard_output,omitempty"`
}

type scriptParams struct {
	Script        string            `json:"script"`
	Interpreter   string            `json:"interpreter,omitempty"`
	Cwd           string            `json:"cwd,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	EnvMode       string            `json:"env_mode,omitempty"`
	TimeoutMS     int64             `json:"timeout_ms,omitempty"`
	DiscardOutput bool              `json:"discard_output,omitempty"`
}

type pathParams struct {
	Path string `json:"path"`
}

type readParams struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

type writeParams struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Mode    string `json:"mode,omitempty"`
}

type editParams struct {
	Path       string `json:"path"`
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

type globParams struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
}

type grepParams struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
	Glob    string `json:"glob,omitempty"`
}

type removeParams struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive,omitempty"`
}

type lifecycleParams struct {
	Op string `json:"op" enum:"start,stop,state"`
}

type logParams struct {
	Level   string `json:"level" enum:"debug,info,warn,error"`
	Message string `json:"message"`
}

type none struct{}

func ms(d time.Duration) int64 { return d.Milliseconds() }

func execResult(r pdk.ExecResult) map[string]any {
	cmd := r.Command
	if cmd == nil {
		cmd = []string{}
	}
	return map[string]any{"exit_code": r.ExitCode, "stdout": r.Stdout, "stderr": r.Stderr, "command": cmd, "cwd": r.Cwd,
		"duration_ms": ms(r.Duration), "truncated": r.Truncated, "timed_out": r.TimedOut, "signal": r.Signal,
		"backend": r.Backend, "sandboxed": r.Sandboxed, "success": r.Success()}
}

func fileInfo(fi pdk.FileInfo) map[string]any {
	m := map[string]any{"path": fi.Path, "name": fi.Name, "kind": string(fi.Kind), "size": fi.Size, "mode": uint32(fi.Mode)}
	if !fi.ModTime.IsZero() {
		m["mod_time"] = fi.ModTime.UTC().Format(time.RFC3339Nano)
	}
	return m
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func lifecycleState(s pdk.LifecycleState) map[string]any {
	m := map[string]any{"name": s.Name, "running": s.Running}
	if !s.StartedAt.IsZero() {
		m["started_at"] = s.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	if !s.LastUsedAt.IsZero() {
		m["last_used_at"] = s.LastUsedAt.UTC().Format(time.RFC3339Nano)
	}
	return m
}

// answer turns a client's (value, error) into the tool's: the error goes
// back as the tool's error, keeping its kind.
func answer(v any, err error) (pdk.Result, error) {
	if err != nil {
		return pdk.Result{}, err
	}
	return pdk.OK("ok", v), nil
}

func init() {
	pdk.Declare("abitest", "1.0.0", pdk.CapShell, pdk.CapFSRead, pdk.CapFSWrite, pdk.CapLifecycle)
	// The order is the tools' order in the plugin's manifest.
	shellTools()
	fsTools()
	lifecycleTools()
	callTools()
}

// shellTools mirror the shell host functions.
func shellTools() {
	pdk.Tool("exec", "wai_shell_exec", func(c *pdk.Call, p execParams) (pdk.Result, error) {
		r, err := pdk.Shell.Exec(pdk.ExecRequest{Argv: p.Argv, Shell: p.Shell, Cwd: p.Cwd, Env: p.Env, EnvMode: pdk.EnvMode(p.EnvMode),
			Stdin: p.Stdin, Timeout: time.Duration(p.TimeoutMS) * time.Millisecond, DiscardOutput: p.DiscardOutput})
		return answer(execResult(r), err)
	})
	pdk.Tool("script", "wai_shell_script", func(c *pdk.Call, p scriptParams) (pdk.Result, error) {
		r, err := pdk.Shell.Script(pdk.ScriptRequest{Script: p.Script, Interpreter: p.Interpreter, Cwd: p.Cwd, Env: p.Env,
			EnvMode: pdk.EnvMode(p.EnvMode), Timeout: time.Duration(p.TimeoutMS) * time.Millisecond, DiscardOutput: p.DiscardOutput})
		return answer(execResult(r), err)
	})
	pdk.Tool("which", "wai_shell_which", func(c *pdk.Call, p struct {
		Command string `json:"command"`
	}) (pdk.Result, error) {
		r, err := pdk.Shell.Which(p.Command)
		return answer(map[string]any{"command": r.Command, "path": r.Path, "found": r.Found()}, err)
	})
	pdk.Tool("env", "wai_shell_env", func(c *pdk.Call, _ none) (pdk.Result, error) {
		r, err := pdk.Shell.Env()
		vars := []map[string]string{}
		for _, v := range r.Vars {
			vars = append(vars, map[string]string{"name": v.Name, "value": v.Value})
		}
		return answer(map[string]any{"vars": vars, "cwd": r.Cwd, "shell": r.Shell}, err)
	})
	pdk.Tool("info", "wai_shell_info", func(c *pdk.Call, _ none) (pdk.Result, error) {
		r, err := pdk.Shell.Info()
		return answer(map[string]any{"backend": r.Backend, "sandboxed": r.Sandboxed, "network_enabled": r.NetworkEnabled,
			"default_timeout_ms": ms(r.DefaultTimeout)}, err)
	})
	pdk.Tool("limits", "wai_shell_limits", func(c *pdk.Call, _ none) (pdk.Result, error) {
		r, err := pdk.Shell.Limits()
		return answer(map[string]any{"default_timeout_ms": ms(r.DefaultTimeout), "min_timeout_ms": ms(r.MinTimeout),
			"max_timeout_ms": ms(r.MaxTimeout), "max_output_bytes": r.MaxOutputBytes, "max_command_bytes": r.MaxCommandBytes,
			"max_stdin_bytes": r.MaxStdinBytes}, err)
	})
}

// fsTools mirror the filesystem host functions.
func fsTools() {
	pdk.Tool("stat", "wai_fs_stat", func(c *pdk.Call, p pathParams) (pdk.Result, error) {
		r, err := pdk.FS.Stat(p.Path)
		return answer(fileInfo(r), err)
	})
	pdk.Tool("list", "wai_fs_list", func(c *pdk.Call, p pathParams) (pdk.Result, error) {
		r, err := pdk.FS.List(p.Path)
		entries := []map[string]any{}
		for _, e := range r.Entries {
			entries = append(entries, fileInfo(e))
		}
		return answer(map[string]any{"entries": entries, "truncated": r.Truncated}, err)
	})
	pdk.Tool("read", "wai_fs_read", func(c *pdk.Call, p readParams) (pdk.Result, error) {
		r, err := pdk.FS.Read(pdk.ReadRequest(p))
		return answer(map[string]any{"path": r.Path, "offset": r.Offset, "lines": orEmpty(r.Lines), "total_lines": r.TotalLines,
			"truncated": r.Truncated}, err)
	})
	pdk.Tool("write", "wai_fs_write", func(c *pdk.Call, p writeParams) (pdk.Result, error) {
		r, err := pdk.FS.Write(pdk.WriteRequest{Path: p.Path, Content: p.Content, Mode: pdk.WriteMode(p.Mode)})
		return answer(map[string]any{"path": r.Path, "bytes": r.Bytes, "created": r.Created}, err)
	})
	pdk.Tool("edit", "wai_fs_edit", func(c *pdk.Call, p editParams) (pdk.Result, error) {
		r, err := pdk.FS.Edit(pdk.EditRequest(p))
		return answer(map[string]any{"path": r.Path, "replacements": r.Replacements}, err)
	})
	pdk.Tool("glob", "wai_fs_glob", func(c *pdk.Call, p globParams) (pdk.Result, error) {
		r, err := pdk.FS.Glob(pdk.GlobRequest(p))
		return answer(map[string]any{"paths": orEmpty(r.Paths), "truncated": r.Truncated}, err)
	})
	pdk.Tool("grep", "wai_fs_grep", func(c *pdk.Call, p grepParams) (pdk.Result, error) {
		r, err := pdk.FS.Grep(pdk.GrepRequest(p))
		matches := []map[string]any{}
		for _, m := range r.Matches {
			matches = append(matches, map[string]any{"path": m.Path, "line": m.Line, "text": m.Text})
		}
		return answer(map[string]any{"matches": matches, "truncated": r.Truncated}, err)
	})
	pdk.Tool("remove", "wai_fs_remove", func(c *pdk.Call, p removeParams) (pdk.Result, error) {
		r, err := pdk.FS.Remove(pdk.RemoveRequest(p))
		return answer(map[string]any{"removed": r.Removed}, err)
	})
}

// lifecycleTools mirror the lifecycle and log host functions.
func lifecycleTools() {
	pdk.Tool("lifecycle", "wai_lifecycle_*", func(c *pdk.Call, p lifecycleParams) (pdk.Result, error) {
		var r pdk.LifecycleState
		var err error
		switch p.Op {
		case "start":
			r, err = pdk.Lifecycle.Start()
		case "stop":
			r, err = pdk.Lifecycle.Stop()
		default:
			r, err = pdk.Lifecycle.State()
		}
		return answer(lifecycleState(r), err)
	})
	pdk.Tool("log", "wai_log", func(c *pdk.Call, p logParams) (pdk.Result, error) {
		return answer(map[string]any{}, pdk.Log(pdk.LogLevel(p.Level), p.Message, "from", "abitest"))
	})
}

// callTools show the plugin's side of a call: the kinds of the errors it
// sees and returns, and the call's own context.
func callTools() {
	// kinds makes host functions fail in known ways and reports, for each,
	// the kind the pdk saw and which sentinels errors.Is matched: the
	// plugin-side half of "errors keep their kind".
	pdk.Tool("kinds", "error kinds as the plugin sees them", func(c *pdk.Call, p struct {
		Existing string `json:"existing" jsonschema:"a file that exists"`
		Missing  string `json:"missing" jsonschema:"a path that does not exist"`
	}) (pdk.Result, error) {
		sentinels := map[string]error{"invalid": pdk.ErrInvalid, "permission": pdk.ErrPermission, "unavailable": pdk.ErrUnavailable,
			"not_found": pdk.ErrNotFound, "exists": pdk.ErrExist, "internal": pdk.ErrInternal}
		report := func(err error) map[string]any {
			matched := []string{}
			for name, s := range sentinels {
				if errors.Is(err, s) {
					matched = append(matched, name)
				}
			}
			var e *pdk.Error
			return map[string]any{"kind": string(pdk.KindOf(err)), "matched": matched, "typed": errors.As(err, &e), "nil": err == nil}
		}
		_, statErr := pdk.FS.Stat(p.Missing)
		_, writeErr := pdk.FS.Write(pdk.WriteRequest{Path: p.Existing, Content: "x", Mode: pdk.WriteCreate})
		_, execErr := pdk.Shell.Exec(pdk.ExecRequest{})
		return pdk.OK("kinds", map[string]any{"stat_missing": report(statErr), "create_existing": report(writeErr), "exec_empty": report(execErr)}), nil
	})
	// fail answers a tool error of the requested kind.
	pdk.Tool("fail", "a tool error of a given kind", func(c *pdk.Call, p struct {
		Kind string `json:"kind"`
	}) (pdk.Result, error) {
		return pdk.Result{}, pdk.Errorf(pdk.Kind(p.Kind), "failing with kind %s on request", p.Kind)
	})
	pdk.Tool("call", "the call's own context", func(c *pdk.Call, _ none) (pdk.Result, error) {
		return pdk.OK(c.Tool, map[string]any{"tool": c.Tool, "id": c.ID, "session": c.Session, "remaining_ms": ms(c.Remaining())}), nil
	})
}

func main() {}
