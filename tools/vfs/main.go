// Command vfs is the bundled plugin of the filesystem tools a model edits a
// workspace with: ls, read_file, write_file, edit_file, glob, grep and rm
// (docs/ARCHITECTURE.md). It speaks only to the pdk's FS client, so the tools
// behave the same on every backend; the kernel enforces limits, policies
// and read-before-write, so the plugin checks only what the model should
// hear about first: the path language, the ranges of its parameters and a
// few mistakes (writing over a file, editing with no change) whose
// messages teach the right call.
package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/vfspath"
)

// Limits of the contract: a read returns at most MaxLines lines, a write at
// most MaxWriteChars characters, and listings stop at MaxResults entries.
const (
	MaxLines      = 2000
	MaxWriteChars = 48000
	MaxResults    = 2000
)

func init() {
	pdk.Declare("vfs", "1.0.0", pdk.CapFSRead, pdk.CapFSWrite)
	pdk.Tool("ls", "List the entries of a directory of the workspace, sorted by name (directories end with /). path is relative to the workspace root; empty is the root.",
		ls, pdk.Returns[lsResult](), pdk.ReadOnly(), pdk.Idempotent(), pdk.OpenWorld(false), pdk.Title("List directory"))
	pdk.Tool("read_file", "Read a text file of the workspace: lines numbered from 1, at most 2000 per call; page with offset (lines to skip) and limit.",
		readFile, pdk.Returns[readResult](), pdk.ReadOnly(), pdk.Idempotent(), pdk.OpenWorld(false), pdk.Title("Read file"))
	pdk.Tool("write_file", "Create a new file in the workspace (parent directories are created). It never overwrites: change an existing file with edit_file.",
		writeFile, pdk.Returns[writeResult](), pdk.Destructive(false), pdk.OpenWorld(false), pdk.Title("Write new file"))
	pdk.Tool("edit_file", "Replace exact text in a file of the workspace. old_string must occur exactly once unless replace_all is true; read the file first and copy the text exactly, whitespace included.",
		editFile, pdk.Returns[editResult](), pdk.Destructive(true), pdk.OpenWorld(false), pdk.Title("Edit file"))
	pdk.Tool("glob", "Find files (not directories) whose path matches a glob pattern (* within a segment, ** across directories), under path (default the root), sorted.",
		glob, pdk.Returns[globResult](), pdk.ReadOnly(), pdk.Idempotent(), pdk.OpenWorld(false), pdk.Title("Find files"))
	pdk.Tool("grep", "Search the text files of the workspace for a regular expression (RE2 syntax), optionally under path and only in files matching glob. Binary files are skipped; matches are sorted by path and line.",
		grep, pdk.Returns[grepResult](), pdk.ReadOnly(), pdk.Idempotent(), pdk.OpenWorld(false), pdk.Title("Search files"))
	pdk.Tool("rm", "Remove a file, or a directory with everything in it. The workspace root cannot be removed.",
		rm, pdk.Returns[rmResult](), pdk.Destructive(true), pdk.OpenWorld(false), pdk.Title("Remove"))
}

// answer turns an error of the FS client into what the model reads. Errors
// about the request (a missing path, an existing file, a refused edit) are
// failed results: the model can correct them. Permission, unavailability
// and internal errors stay errors so their kind reaches the kernel.
func answer(err error, format string, args ...any) (pdk.Result, error) {
	var e *pdk.Error
	if !errors.As(err, &e) {
		return pdk.Result{}, err
	}
	switch e.Kind {
	case pdk.KindNotFound, pdk.KindExists, pdk.KindInvalid:
		prefix := fmt.Sprintf(format, args...)
		return pdk.Fail("%s: %s", prefix, e.Message), nil
	}
	return pdk.Result{}, err
}

// notFound says which path is missing in the words models know, and why
// when that is not plain absence: given is the path as the model wrote it,
// n its normalised form, err the backend's answer.
func notFound(what, given, n string, err error) pdk.Result {
	msg := fmt.Sprintf("%s does not exist in the filesystem: %s", what, vfspath.Display(n))
	var e *pdk.Error
	if errors.As(err, &e) && strings.Contains(e.Message, "symbolic link") {
		// The backend found a link the file tools cannot follow: the
		// shell lists that name, so "does not exist" alone would be false.
		reason := e.Message
		if i := strings.Index(reason, "symbolic link"); i >= 0 {
			if j := strings.LastIndex(reason[:i], ": "); j >= 0 {
				reason = reason[j+2:]
			}
		}
		msg += " (" + reason + ")"
	}
	if hint := vfspath.OutsideHint(given); hint != "" {
		msg += ". " + hint
	}
	return pdk.Fail("%s", msg)
}

// failed answers an error of the FS client about p (given, as the model
// wrote it): a missing path in notFound's words (what names it: "File",
// "Directory", "Path"), any other through answer.
func failed(err error, what, given, p, format string, args ...any) (pdk.Result, error) {
	if pdk.KindOf(err) == pdk.KindNotFound {
		return notFound(what, given, p, err), nil
	}
	return answer(err, format, args...)
}

// upTo keeps the first MaxResults items of a listing; more reports that
// it dropped some, which the answer then says.
func upTo[T any](items []T) (kept []T, more bool) {
	if len(items) > MaxResults {
		return items[:MaxResults], true
	}
	return items, false
}

func main() {}
