package pdk

import (
	"io/fs"
	"sort"
	"time"
)

// The types below mirror github.com/wai-dev/wai/host/backend, which a
// plugin cannot import (it is host code). On the wire they are the JSON
// shapes of docs/ABI.md: snake_case, durations in milliseconds.

// EnvMode says how ExecRequest.Env combines with the workspace environment.
type EnvMode string

const (
	EnvExtend  EnvMode = "extend"  // merge over the workspace environment (default)
	EnvReplace EnvMode = "replace" // keep only PATH plus the given variables
)

// ExecRequest is one command: exactly one of Argv (run directly) and Shell
// (run with /bin/sh -c).
type ExecRequest struct {
	Argv          []string
	Shell         string
	Cwd           string // relative to the workspace root; empty is the root
	Env           map[string]string
	EnvMode       EnvMode
	Stdin         string
	Timeout       time.Duration // zero: the host's default
	DiscardOutput bool
}

// ScriptRequest runs Script with Interpreter (default /bin/sh).
type ScriptRequest struct {
	Script        string
	Interpreter   string
	Cwd           string
	Env           map[string]string
	EnvMode       EnvMode
	Timeout       time.Duration
	DiscardOutput bool
}

// TimeoutExitCode is the exit code of a command killed at its timeout.
const TimeoutExitCode = 124

// ExecResult is what one command did. A timeout is a result (TimedOut,
// exit code 124), not an error; so is a non-zero exit.
type ExecResult struct {
	ExitCode  int
	Stdout    string
	Stderr    string
	Command   []string
	Cwd       string
	Duration  time.Duration
	Truncated bool
	TimedOut  bool
	Signal    int
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

// Get returns the value of name and whether it is set.
func (s EnvSnapshot) Get(name string) (string, bool) {
	i := sort.Search(len(s.Vars), func(i int) bool { return s.Vars[i].Name >= name })
	if i < len(s.Vars) && s.Vars[i].Name == name {
		return s.Vars[i].Value, true
	}
	return "", false
}

// ShellInfo describes the shell of the session.
type ShellInfo struct {
	Backend        string
	Sandboxed      bool
	NetworkEnabled bool
	DefaultTimeout time.Duration
}

// FileKind is the type of a directory entry.
type FileKind string

const (
	KindFile    FileKind = "file"
	KindDir     FileKind = "dir"
	KindSymlink FileKind = "symlink"
	KindOther   FileKind = "other"
)

// FileInfo describes one path; Path is relative to the workspace root.
type FileInfo struct {
	Path    string
	Name    string
	Kind    FileKind
	Size    int64
	Mode    fs.FileMode // permission bits only
	ModTime time.Time
}

// ListResult is a directory listing, sorted by name.
type ListResult struct {
	Entries   []FileInfo
	Truncated bool
}

// ReadRequest selects Limit lines from line Offset (0-based); Limit 0 is
// the host's maximum.
type ReadRequest struct {
	Path   string
	Offset int
	Limit  int
}

// ReadResult holds the selected lines without their line endings.
type ReadResult struct {
	Path       string
	Offset     int
	Lines      []string
	TotalLines int
	Truncated  bool
}

// WriteMode says what Write does with an existing file.
type WriteMode string

const (
	WriteCreate    WriteMode = "create"    // the file must not exist (ErrExist)
	WriteOverwrite WriteMode = "overwrite" // create or replace
	WriteAppend    WriteMode = "append"    // create or append
)

// WriteRequest writes Content; missing parent directories are created.
type WriteRequest struct {
	Path    string
	Content string
	Mode    WriteMode // empty: WriteCreate
}

// WriteResult reports a write.
type WriteResult struct {
	Path    string
	Bytes   int
	Created bool
}

// EditRequest replaces Old with New: once (Old must be unique) or all.
type EditRequest struct {
	Path       string
	Old        string
	New        string
	ReplaceAll bool
}

// EditResult reports an edit.
type EditResult struct {
	Path         string
	Replacements int
}

// GlobRequest matches files under Path against Pattern ("**" spans
// directories).
type GlobRequest struct {
	Pattern string
	Path    string
}

// GlobResult lists matching files, sorted.
type GlobResult struct {
	Paths     []string
	Truncated bool
}

// GrepRequest searches text files under Path for the RE2 Pattern,
// optionally only files matching Glob.
type GrepRequest struct {
	Pattern string
	Path    string
	Glob    string
}

// GrepMatch is one matching line (1-based).
type GrepMatch struct {
	Path string
	Line int
	Text string
}

// GrepResult lists matches sorted by (path, line).
type GrepResult struct {
	Matches   []GrepMatch
	Truncated bool
}

// RemoveRequest removes a path; a non-empty directory needs Recursive.
type RemoveRequest struct {
	Path      string
	Recursive bool
}

// RemoveResult reports how many entries were removed.
type RemoveResult struct {
	Removed int
}

// LifecycleState describes the session's sandbox (a container).
type LifecycleState struct {
	Name       string
	Running    bool
	StartedAt  time.Time
	LastUsedAt time.Time
	// JobsEnded is how many running background jobs a Stop ended.
	JobsEnded int
}
