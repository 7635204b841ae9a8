package agentproto

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// File operations (FSRequest.Op), one per method of the host's
// backend.Filesystem and of the optional interfaces the agent serves.
const (
	FSStat      = "stat"
	FSList      = "list"
	FSRead      = "read"
	FSWrite     = "write"
	FSEdit      = "edit"
	FSGlob      = "glob"
	FSGrep      = "grep"
	FSRemove    = "remove"
	FSResolve   = "resolve"    // backend.PathResolver
	FSReadBytes = "read_bytes" // backend.BlobReader
	FSCopyIn    = "copy_in"    // backend.CopyInFS: the content follows in FSData frames
)

// MaxFSData is the most content bytes one FSData frame carries.
const MaxFSData = 256 << 10

// FSRequest asks the agent for one file operation on the workspace, under
// a fresh id (shared with Exec's: an id in use is a protocol error). The
// host sends the limits the operation runs under with every request; the
// agent refuses one without them rather than use defaults of its own.
// TimeoutMS is what is left of the caller's deadline (0: none); the agent
// stops the operation there, and a Cancel for the id stops it at once.
// The answer is one FSResponse, sent as FSPart frames and an FSEnd.
type FSRequest struct {
	Op            string `json:"op"`
	TimeoutMS     int64  `json:"timeout_ms,omitempty"`
	MaxResults    int    `json:"max_results"`
	MaxReadBytes  int    `json:"max_read_bytes"`
	MaxWriteChars int    `json:"max_write_chars"`

	Path       Text   `json:"path,omitempty"`
	Offset     int    `json:"offset,omitempty"`      // read
	Limit      int    `json:"limit,omitempty"`       // read
	Content    Text   `json:"content,omitempty"`     // write
	Mode       string `json:"mode,omitempty"`        // write
	Resolved   Text   `json:"resolved,omitempty"`    // write, edit, remove
	Old        Text   `json:"old,omitempty"`         // edit
	New        Text   `json:"new,omitempty"`         // edit
	ReplaceAll bool   `json:"replace_all,omitempty"` // edit
	Pattern    Text   `json:"pattern,omitempty"`     // glob, grep
	Glob       Text   `json:"glob,omitempty"`        // grep
	Recursive  bool   `json:"recursive,omitempty"`   // remove
	FollowLast bool   `json:"follow_last,omitempty"` // resolve
	Max        int64  `json:"max,omitempty"`         // read_bytes
	Perm       uint32 `json:"perm,omitempty"`        // copy_in: permission bits
}

// FSError is a failed operation. Kind is the backend error kind
// ("invalid", "permission", "unavailable", "not_found", "exist"; empty for
// an internal error); Stopped says the operation's context ended it
// ("deadline" or "canceled"), so the host's error wraps the context error
// as a local one would.
type FSError struct {
	Kind    string `json:"kind,omitempty"`
	Op      string `json:"op,omitempty"`
	Path    Text   `json:"path,omitempty"`
	Msg     string `json:"msg"`
	Stopped string `json:"stopped,omitempty"`
}

// FSInfo is a backend.FileInfo: Mode the io/fs.FileMode bits, ModTime in
// nanoseconds since the Unix epoch.
type FSInfo struct {
	Path    Text   `json:"path"`
	Name    Text   `json:"name"`
	Kind    string `json:"kind"`
	Size    int64  `json:"size"`
	Mode    uint32 `json:"mode"`
	ModTime int64  `json:"mtime_ns"`
}

// FSMatch is a backend.GrepMatch.
type FSMatch struct {
	Path Text `json:"path"`
	Line int  `json:"line"`
	Text Text `json:"text"`
}

// FSResponse is the answer to an FSRequest: Error, or the fields of the
// operation's result.
type FSResponse struct {
	Error *FSError `json:"error,omitempty"`

	Info         *FSInfo   `json:"info,omitempty"`    // stat
	Entries      []FSInfo  `json:"entries,omitempty"` // list
	Lines        []Text    `json:"lines,omitempty"`   // read
	Offset       int       `json:"offset,omitempty"`  // read
	TotalLines   int       `json:"total_lines,omitempty"`
	Paths        []Text    `json:"paths,omitempty"`   // glob
	Matches      []FSMatch `json:"matches,omitempty"` // grep
	Truncated    bool      `json:"truncated,omitempty"`
	Path         Text      `json:"path,omitempty"` // read, write, edit; resolve's answer
	Bytes        int       `json:"bytes,omitempty"`
	Created      bool      `json:"created,omitempty"`
	Replacements int       `json:"replacements,omitempty"`
	Removed      int       `json:"removed,omitempty"`
	Data         []byte    `json:"data,omitempty"` // read_bytes
	Size         int64     `json:"size,omitempty"` // read_bytes
}

// Text is a string that crosses the wire byte for byte. JSON strings hold
// UTF-8 only (encoding/json turns other bytes into U+FFFD), but file names
// and file contents are bytes: a Text that is valid UTF-8 is a JSON
// string, any other one the object {"b64": base64 of its bytes}.
type Text string

// MarshalJSON implements json.Marshaler.
func (t Text) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(t)) {
		return json.Marshal(string(t))
	}
	return json.Marshal(struct {
		B64 string `json:"b64"`
	}{base64.StdEncoding.EncodeToString([]byte(t))})
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Text) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			B64 *string `json:"b64"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		if o.B64 == nil {
			return errors.New("text object without b64")
		}
		raw, err := base64.StdEncoding.DecodeString(*o.B64)
		if err != nil {
			return err
		}
		*t = Text(raw)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = Text(s)
	return nil
}
