package main

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/vfspath"
)

type writeParams struct {
	FilePath string `json:"file_path" jsonschema:"new file relative to the workspace root (a leading /workspace is accepted)"`
	Content  string `json:"content" jsonschema:"the whole content of the file, at most 48,000 characters"`
}

func writeFile(_ *pdk.Call, p writeParams) (pdk.Result, error) {
	file, err := vfspath.File("file_path", p.FilePath)
	if err != nil {
		return pdk.Fail("%v", err), nil
	}
	if n := utf8.RuneCountInString(p.Content); n > MaxWriteChars {
		return pdk.Fail("Content exceeds maximum length of 48,000 characters (got %d).", n), nil
	}
	// Asked first so the model gets the one message that tells it what to
	// do instead, whichever backend serves the workspace.
	if fi, err := pdk.FS.Stat(file); err == nil {
		if fi.Kind == pdk.KindDir {
			return pdk.Fail("%s is a directory: name a file inside it", vfspath.Display(file)), nil
		}
		return existing(file), nil
	}
	res, err := pdk.FS.Write(pdk.WriteRequest{Path: file, Content: p.Content, Mode: pdk.WriteCreate})
	switch {
	case pdk.KindOf(err) == pdk.KindExists:
		return existing(file), nil // created meanwhile
	case err != nil:
		return answer(err, "Cannot write %s", vfspath.Display(file))
	}
	return pdk.OK(fmt.Sprintf("Wrote %d bytes to %s.%s", res.Bytes, vfspath.Display(file), vfspath.TookInside(p.FilePath, file)),
		writeResult{Path: vfspath.Display(file), Bytes: res.Bytes}), nil
}

func existing(file string) pdk.Result {
	return pdk.Fail("File already exists; use edit_file to modify existing content: %s", vfspath.Display(file))
}

type editParams struct {
	FilePath   string `json:"file_path" jsonschema:"file relative to the workspace root (a leading /workspace is accepted)"`
	OldString  string `json:"old_string" jsonschema:"the exact text to replace, whitespace included"`
	NewString  string `json:"new_string" jsonschema:"the text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence instead of requiring exactly one" default:"false"`
}

func editFile(_ *pdk.Call, p editParams) (pdk.Result, error) {
	file, err := vfspath.File("file_path", p.FilePath)
	if err != nil {
		return pdk.Fail("%v", err), nil
	}
	switch {
	case p.OldString == "":
		return pdk.Fail("old_string must not be empty."), nil
	case p.OldString == p.NewString:
		return pdk.Fail("old_string and new_string are identical: the edit would change nothing; give the new text as new_string."), nil
	case utf8.RuneCountInString(p.OldString) > MaxWriteChars || utf8.RuneCountInString(p.NewString) > MaxWriteChars:
		return pdk.Fail("Replacement strings must be 48,000 characters or fewer."), nil
	}
	res, err := pdk.FS.Edit(pdk.EditRequest{Path: file, Old: p.OldString, New: p.NewString, ReplaceAll: p.ReplaceAll})
	switch {
	case pdk.KindOf(err) == pdk.KindNotFound:
		return notFound("File", p.FilePath, file, err), nil
	case err != nil:
		return editFailure(err, file)
	}
	noun := "replacement"
	if res.Replacements != 1 {
		noun += "s"
	}
	return pdk.OK(fmt.Sprintf("Edited %s: %d %s.%s", vfspath.Display(file), res.Replacements, noun, vfspath.TookInside(p.FilePath, file)),
		editResult{Path: vfspath.Display(file), Replacements: res.Replacements}), nil
}

type rmParams struct {
	Path string `json:"path" jsonschema:"file or directory relative to the workspace root; a directory goes with everything in it"`
}

func rm(_ *pdk.Call, p rmParams) (pdk.Result, error) {
	target, err := vfspath.Normalize("path", p.Path)
	if err != nil {
		return pdk.Fail("%v", err), nil
	}
	if target == "" {
		return pdk.Fail("Cannot delete root directory."), nil
	}
	res, err := pdk.FS.Remove(pdk.RemoveRequest{Path: target, Recursive: true})
	switch {
	case pdk.KindOf(err) == pdk.KindNotFound:
		return pdk.Fail("No files matched the provided path: %s", vfspath.Display(target)), nil
	case err != nil:
		return answer(err, "Cannot remove %s", vfspath.Display(target))
	}
	noun := "entry"
	if res.Removed != 1 {
		noun = "entries"
	}
	return pdk.OK(fmt.Sprintf("Removed %s (%d %s).%s", vfspath.Display(target), res.Removed, noun, vfspath.TookInside(p.Path, target)),
		rmResult{Path: vfspath.Display(target), Removed: res.Removed}), nil
}

// editFailure words the two refusals every model meets — no match, several
// matches — the same on every backend. The plugin cannot count matches
// itself without reading the file, which would mark it read and defeat the
// kernel's read-before-write; so it recognises the backends' reasons (both
// built-in filesystems say "not found" and "occurs N times") and passes any
// other reason on as it is.
func editFailure(err error, file string) (pdk.Result, error) {
	if pdk.KindOf(err) == pdk.KindInvalid {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "read_before_write"):
		case strings.Contains(msg, " occurs "):
			return pdk.Fail("old_string must match exactly once unless replace_all is true: %s", lastClause(msg)), nil
		case strings.Contains(msg, "not found"):
			return pdk.Fail("old_string not found in the target file: %s", vfspath.Display(file)), nil
		}
	}
	return answer(err, "Cannot edit %s", vfspath.Display(file))
}

// lastClause keeps the part of a backend's reason after its "op path:"
// prefix, e.g. "old string occurs 2 times: ...".
func lastClause(msg string) string {
	if i := strings.Index(msg, "occurs "); i >= 0 {
		rest := msg[i:]
		if j := strings.IndexAny(rest, ":;"); j >= 0 {
			rest = rest[:j]
		}
		return "it " + rest
	}
	return msg
}
