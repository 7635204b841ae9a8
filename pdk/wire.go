package pdk

import (
	"io/fs"
	"time"
)

// Wire shapes of the host functions (docs/ABI.md), kept apart from the
// public types so those can carry time.Duration and time.Time.

type wireExecRequest struct {
	Argv          []string          `json:"argv,omitempty"`
	Shell         string            `json:"shell,omitempty"`
	Cwd           string            `json:"cwd,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	EnvMode       EnvMode           `json:"env_mode,omitempty"`
	Stdin         string            `json:"stdin,omitempty"`
	TimeoutMS     int64             `json:"timeout_ms,omitempty"`
	DiscardOutput bool              `json:"discard_output,omitempty"`
}

type wireScriptRequest struct {
	Script        string            `json:"script"`
	Interpreter   string            `json:"interpreter,omitempty"`
	Cwd           string            `json:"cwd,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	EnvMode       EnvMode           `json:"env_mode,omitempty"`
	TimeoutMS     int64             `json:"timeout_ms,omitempty"`
	DiscardOutput bool              `json:"discard_output,omitempty"`
}

type wireExecResult struct {
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

func (w wireExecResult) result() ExecResult {
	return ExecResult{ExitCode: w.ExitCode, Stdout: w.Stdout, Stderr: w.Stderr, Command: w.Command, Cwd: w.Cwd,
		Duration: time.Duration(w.DurationMS) * time.Millisecond, Truncated: w.Truncated, TimedOut: w.TimedOut,
		Signal: w.Signal, Backend: w.Backend, Sandboxed: w.Sandboxed}
}

type wireWhich struct {
	Command string `json:"command"`
	Path    string `json:"path,omitempty"`
	Found   bool   `json:"found,omitempty"`
}

type wireEnv struct {
	Vars []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"vars"`
	Cwd   string `json:"cwd"`
	Shell string `json:"shell"`
}

type wireInfo struct {
	Backend          string `json:"backend"`
	Sandboxed        bool   `json:"sandboxed"`
	NetworkEnabled   bool   `json:"network_enabled"`
	DefaultTimeoutMS int64  `json:"default_timeout_ms"`
}

type wirePath struct {
	Path string `json:"path"`
}

type wireFileInfo struct {
	Path    string `json:"path"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Size    int64  `json:"size"`
	Mode    uint32 `json:"mode"`
	ModTime string `json:"mod_time"`
}

func (w wireFileInfo) info() FileInfo {
	fi := FileInfo{Path: w.Path, Name: w.Name, Kind: FileKind(w.Kind), Size: w.Size, Mode: fs.FileMode(w.Mode)}
	fi.ModTime = parseTime(w.ModTime)
	return fi
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

type wireList struct {
	Entries   []wireFileInfo `json:"entries"`
	Truncated bool           `json:"truncated"`
}

type wireReadRequest struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

type wireReadResult struct {
	Path       string   `json:"path"`
	Offset     int      `json:"offset"`
	Lines      []string `json:"lines"`
	TotalLines int      `json:"total_lines"`
	Truncated  bool     `json:"truncated"`
}

type wireWriteRequest struct {
	Path    string    `json:"path"`
	Content string    `json:"content"`
	Mode    WriteMode `json:"mode,omitempty"`
}

type wireWriteResult struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created"`
}

type wireEditRequest struct {
	Path       string `json:"path"`
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

type wireEditResult struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
}

type wireGlobRequest struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
}

type wireGlobResult struct {
	Paths     []string `json:"paths"`
	Truncated bool     `json:"truncated"`
}

type wireGrepRequest struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
	Glob    string `json:"glob,omitempty"`
}

type wireGrepResult struct {
	Matches []struct {
		Path string `json:"path"`
		Line int    `json:"line"`
		Text string `json:"text"`
	} `json:"matches"`
	Truncated bool `json:"truncated"`
}

type wireRemoveRequest struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive,omitempty"`
}

type wireRemoveResult struct {
	Removed int `json:"removed"`
}

type wireLifecycle struct {
	Name       string `json:"name"`
	Running    bool   `json:"running"`
	StartedAt  string `json:"started_at"`
	LastUsedAt string `json:"last_used_at"`
	JobsEnded  int    `json:"jobs_ended"`
}

func (w wireLifecycle) state() LifecycleState {
	return LifecycleState{Name: w.Name, Running: w.Running, StartedAt: parseTime(w.StartedAt), LastUsedAt: parseTime(w.LastUsedAt), JobsEnded: w.JobsEnded}
}

type wireLog struct {
	Level   string         `json:"level"`
	Message string         `json:"message"`
	Attrs   map[string]any `json:"attrs,omitempty"`
}

func ms(d time.Duration) int64 {
	if d > 0 && d < time.Millisecond {
		return 1 // a positive timeout never rounds down to "the default"
	}
	return d.Milliseconds()
}
