package main

// The structured values of the tools' results. pdk.Returns derives each
// tool's output schema from its type, and the kernel holds every value to
// that schema.

type lsResult struct {
	Path      string  `json:"path" jsonschema:"the directory listed, relative to the workspace root (. for the root)"`
	Entries   []Entry `json:"entries"`
	Truncated bool    `json:"truncated" jsonschema:"more entries exist than were listed"`
}

// Entry is one line of a listing in the structured value.
type Entry struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	Size int64  `json:"size"`
}

type readResult struct {
	Path       string   `json:"path"`
	Offset     int      `json:"offset" jsonschema:"lines skipped before the first one returned"`
	Limit      int      `json:"limit"`
	Lines      []string `json:"lines" jsonschema:"the lines read, without their line endings"`
	TotalLines int      `json:"total_lines"`
	Truncated  bool     `json:"truncated" jsonschema:"some lines were too long and were cut"`
}

type globResult struct {
	Paths     []string `json:"paths" jsonschema:"matching files, relative to the workspace root, sorted"`
	Truncated bool     `json:"truncated"`
}

type grepResult struct {
	Matches   []Match `json:"matches"`
	Truncated bool    `json:"truncated"`
}

// Match is one matching line in the structured value.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

type writeResult struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
}

type editResult struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
}

type rmResult struct {
	Path    string `json:"path"`
	Removed int    `json:"removed" jsonschema:"entries removed, the directory's contents included"`
}
