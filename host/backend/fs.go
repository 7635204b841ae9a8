package backend

import (
	"context"
	"io/fs"
	"time"
)

// Filesystem serves files of a workspace. Every path is relative to the
// workspace root or absolute inside it ("/a/b" means <root>/a/b), and
// resolves chroot-style: no "..", absolute path or symlink ever reaches
// outside the root. Only regular files and directories are read or written;
// a FIFO or device fails fast with ErrInvalid instead of blocking.
//
// Paths in results are slash-separated and relative to the root, "." being
// the root itself.
type Filesystem interface {
	Stat(ctx context.Context, path string) (FileInfo, error)
	// List returns the entries of a directory, sorted by name, capped at
	// Limits.MaxResults. Listing a file is ErrInvalid.
	List(ctx context.Context, path string) (ListResult, error)
	Read(ctx context.Context, req ReadRequest) (ReadResult, error)
	Write(ctx context.Context, req WriteRequest) (WriteResult, error)
	Edit(ctx context.Context, req EditRequest) (EditResult, error)
	Glob(ctx context.Context, req GlobRequest) (GlobResult, error)
	Grep(ctx context.Context, req GrepRequest) (GrepResult, error)
	Remove(ctx context.Context, req RemoveRequest) (RemoveResult, error)
}

// FileKind is the type of a directory entry.
type FileKind string

const (
	KindFile    FileKind = "file"
	KindDir     FileKind = "dir"
	KindSymlink FileKind = "symlink"
	KindOther   FileKind = "other" // FIFO, socket, device: never read or written
)

// FileInfo describes one path. Stat follows symlinks (inside the root);
// List reports symlinks as KindSymlink without following them.
type FileInfo struct {
	Path    string
	Name    string
	Kind    FileKind
	Size    int64
	Mode    fs.FileMode
	ModTime time.Time
}

// ListResult is a directory listing.
type ListResult struct {
	Entries   []FileInfo
	Truncated bool // more than Limits.MaxResults entries
}

// ReadRequest selects lines of a text file: Limit lines starting at line
// Offset (0-based). Limit 0 means Limits.MaxResults; larger is ErrInvalid.
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
	// Truncated: a line or the whole answer was cut to Limits.MaxReadBytes.
	Truncated bool
}

// WriteMode says what Write does with an existing file.
type WriteMode string

const (
	WriteCreate    WriteMode = "create"    // the file must not exist (ErrExist)
	WriteOverwrite WriteMode = "overwrite" // create or replace
	WriteAppend    WriteMode = "append"    // create or append
)

// WriteRequest writes Content (at most Limits.MaxWriteChars characters).
// Missing parent directories are created.
type WriteRequest struct {
	Path    string
	Content string
	Mode    WriteMode // empty means WriteCreate
	// Resolved, when set, is what PathResolver.ResolvePath returned for
	// Path (and a policy judged): the write lands there, following no
	// symlink, or fails with ErrInvalid if one appeared on it meanwhile.
	// Path still names the file in results and messages.
	Resolved string
}

// WriteResult reports a write.
type WriteResult struct {
	Path    string
	Bytes   int
	Created bool
}

// EditRequest replaces Old with New in a file: Old must occur exactly once,
// or at least once when ReplaceAll is set; otherwise ErrInvalid.
type EditRequest struct {
	Path       string
	Old        string
	New        string
	ReplaceAll bool
	// Resolved: as in WriteRequest.
	Resolved string
}

// EditResult reports an edit.
type EditResult struct {
	Path         string
	Replacements int
}

// GlobRequest matches files (not directories) under Path (default the root)
// against Pattern: path.Match syntax per segment, "**" for any number of
// segments. Results are sorted, relative to the root, capped at MaxResults.
type GlobRequest struct {
	Pattern string
	Path    string
}

// GlobResult lists matching files.
type GlobResult struct {
	Paths     []string
	Truncated bool
}

// GrepRequest searches text files under Path (a directory or one file;
// default the root) for the RE2 Pattern. Glob, when set, filters files by
// their path relative to Path (or by base name when it has no "/"). Binary
// files are skipped. An invalid pattern is ErrInvalid.
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

// GrepResult lists matches sorted by (path, line), capped at MaxResults.
type GrepResult struct {
	Matches   []GrepMatch
	Truncated bool
}

// RemoveRequest removes a file, symlink or directory. A non-empty
// directory needs Recursive. The root itself is never removed (ErrInvalid).
type RemoveRequest struct {
	Path      string
	Recursive bool
	// Resolved: as in WriteRequest (ResolvePath with followLast false).
	Resolved string
}

// PathResolver is implemented by a Filesystem that can name the entry a
// mutation would change. Policies judging fs.write, fs.edit and fs.remove
// see that name next to the requested path, so that a symlink ("p ->
// protected") cannot carry a write past a rule about "protected/"; the
// kernel then passes it back in the request's Resolved field so the
// mutation changes exactly what the policy judged.
type PathResolver interface {
	// ResolvePath returns the root-relative path, with no symlink in it,
	// of the entry a write or edit (followLast) or a remove (!followLast:
	// the last element is never followed) of path would change, with
	// symlinks followed chroot-style inside the workspace (an absolute
	// target counts from the root, where a command would reach the
	// system's path; a parent directory whose link leads nowhere there is
	// an error, not a path; a last element that does is the root's x). Missing parents are appended as named; nothing is created.
	ResolvePath(ctx context.Context, path string, followLast bool) (string, error)
}

// RemoveResult reports how many entries were removed.
type RemoveResult struct {
	Removed int
}
