package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/vfspath"
)

type lsParams struct {
	Path string `json:"path,omitempty" jsonschema:"directory relative to the workspace root (a leading /workspace is accepted); empty lists the root"`
}

func ls(_ *pdk.Call, p lsParams) (pdk.Result, error) {
	dir, err := vfspath.Normalize("path", p.Path)
	if err != nil {
		return pdk.Fail("%v", err), nil
	}
	fi, err := pdk.FS.Stat(dir)
	switch {
	case err != nil:
		return failed(err, "Directory", p.Path, dir, "Cannot list %s", vfspath.Display(dir))
	case fi.Kind != pdk.KindDir:
		return pdk.Fail("Cannot list a file path; provide a directory: %s", vfspath.Display(dir)), nil
	}
	res, err := pdk.FS.List(dir)
	if err != nil {
		return answer(err, "Cannot list %s", vfspath.Display(dir))
	}
	listed, more := upTo(res.Entries)
	res.Truncated = res.Truncated || more
	entries := make([]Entry, 0, len(listed))
	var b strings.Builder
	for _, e := range listed {
		entries = append(entries, Entry{Path: e.Path, Kind: string(e.Kind), Size: e.Size})
		name := e.Name
		if e.Kind == pdk.KindDir {
			name += "/"
		}
		fmt.Fprintln(&b, name)
	}
	msg := strings.TrimSuffix(b.String(), "\n")
	if len(entries) == 0 {
		msg = fmt.Sprintf("Directory %s is empty.", vfspath.Where(dir))
	}
	if res.Truncated {
		msg += fmt.Sprintf("\n[truncated: only the first %d entries are shown]", MaxResults)
	}
	return pdk.OK(msg, lsResult{Path: vfspath.Display(dir), Entries: entries, Truncated: res.Truncated}), nil
}

type readParams struct {
	FilePath string `json:"file_path" jsonschema:"file relative to the workspace root (a leading /workspace is accepted)"`
	Offset   int    `json:"offset,omitempty" jsonschema:"lines to skip before the first one returned (0-based, default 0)" default:"0"`
	Limit    *int   `json:"limit,omitempty" jsonschema:"most lines to return, 1 to 2000 (default 2000)" default:"2000"`
}

func readFile(_ *pdk.Call, p readParams) (pdk.Result, error) {
	file, err := vfspath.File("file_path", p.FilePath)
	if err != nil {
		return pdk.Fail("%v", err), nil
	}
	limit := MaxLines
	if p.Limit != nil {
		limit = *p.Limit
	}
	if p.Offset < 0 {
		return pdk.Fail("offset must be non-negative."), nil
	}
	if limit <= 0 {
		return pdk.Fail("limit must be a positive integer."), nil
	}
	// Clamped rather than refused: a model asking for more than a page
	// wants as much as there is, and the trailer says how to read on.
	limit = min(limit, MaxLines)
	res, err := pdk.FS.Read(pdk.ReadRequest{Path: file, Offset: p.Offset, Limit: limit})
	if err != nil {
		return failed(err, "File", p.FilePath, file, "Cannot read %s", vfspath.Display(file))
	}
	// A NUL byte would reach the model raw, and a page of a binary file
	// means nothing to it anyway: grep skips such files, read_file says so.
	for _, line := range res.Lines {
		if strings.IndexByte(line, 0) >= 0 {
			return pdk.Fail("Cannot read %s: it is a binary file (it contains NUL bytes); inspect it with shell_execute instead, e.g. [\"od\", \"-c\", \"%s\"]", vfspath.Display(file), file), nil
		}
	}
	if res.TotalLines > 0 && p.Offset >= res.TotalLines {
		return pdk.Fail("offset %d is past the end of %s, which has %d lines", p.Offset, vfspath.Display(file), res.TotalLines), nil
	}
	var b strings.Builder
	for i, line := range res.Lines {
		fmt.Fprintf(&b, "%4d | %s\n", p.Offset+i+1, line)
	}
	msg := strings.TrimSuffix(b.String(), "\n")
	end := p.Offset + len(res.Lines)
	switch {
	case res.TotalLines == 0:
		msg = fmt.Sprintf("File %s is empty.", vfspath.Display(file))
	case end < res.TotalLines:
		msg += fmt.Sprintf("\n[showing lines %d-%d of %d; read on with offset=%d]", p.Offset+1, end, res.TotalLines, end)
	}
	if res.Truncated {
		msg += "\n[truncated: some lines were too long and were cut]"
	}
	return pdk.OK(msg, readResult{Path: vfspath.Display(file), Offset: p.Offset, Limit: limit,
		Lines: res.Lines, TotalLines: res.TotalLines, Truncated: res.Truncated}), nil
}

type globParams struct {
	Pattern string `json:"pattern" jsonschema:"glob matched against paths relative to path: * and ? within a segment, ** across directories (e.g. **/*.py)"`
	Path    string `json:"path,omitempty" jsonschema:"directory to search under (default the root)" default:"."`
}

func glob(_ *pdk.Call, p globParams) (pdk.Result, error) {
	dir, err := vfspath.Normalize("path", p.Path)
	if err != nil {
		return pdk.Fail("%v", err), nil
	}
	if strings.TrimSpace(p.Pattern) == "" {
		return pdk.Fail("Pattern must not be empty."), nil
	}
	res, err := pdk.FS.Glob(pdk.GlobRequest{Pattern: p.Pattern, Path: dir})
	if err != nil {
		return failed(err, "Directory", p.Path, dir, "Cannot glob %q under %s", p.Pattern, vfspath.Display(dir))
	}
	paths, more := upTo(res.Paths)
	res.Truncated = res.Truncated || more
	shown := make([]string, len(paths))
	for i, q := range paths {
		shown[i] = vfspath.Display(q)
	}
	msg := strings.Join(shown, "\n")
	if len(shown) == 0 {
		msg = fmt.Sprintf("No files match %q under %s.", p.Pattern, vfspath.Where(dir))
	}
	if res.Truncated {
		msg += fmt.Sprintf("\n[truncated: only the first %d matches are shown]", MaxResults)
	}
	return pdk.OK(msg, globResult{Paths: shown, Truncated: res.Truncated}), nil
}

type grepParams struct {
	Pattern string `json:"pattern" jsonschema:"regular expression (RE2 syntax) matched against each line"`
	Path    string `json:"path,omitempty" jsonschema:"directory or file to search (default the root)"`
	Glob    string `json:"glob,omitempty" jsonschema:"only search files matching this glob (e.g. *.py, or src/**/*.go)"`
}

func grep(_ *pdk.Call, p grepParams) (pdk.Result, error) {
	dir, err := vfspath.Normalize("path", p.Path)
	if err != nil {
		return pdk.Fail("%v", err), nil
	}
	if p.Pattern == "" {
		return pdk.Fail("Pattern must not be empty."), nil
	}
	// Compiled here too (Go's regexp is the backends' RE2) so a bad
	// pattern reads the same on every backend.
	if _, err := regexp.Compile(p.Pattern); err != nil {
		return pdk.Fail("Invalid regular expression: %v", err), nil
	}
	res, err := pdk.FS.Grep(pdk.GrepRequest{Pattern: p.Pattern, Path: dir, Glob: p.Glob})
	if err != nil {
		return failed(err, "Path", p.Path, dir, "Cannot grep %s", vfspath.Display(dir))
	}
	found, more := upTo(res.Matches)
	res.Truncated = res.Truncated || more
	matches := make([]Match, 0, len(found))
	var b strings.Builder
	for _, m := range found {
		shown := vfspath.Display(m.Path)
		matches = append(matches, Match{Path: shown, Line: m.Line, Text: m.Text})
		fmt.Fprintf(&b, "%s:%d: %s\n", shown, m.Line, m.Text)
	}
	msg := strings.TrimSuffix(b.String(), "\n")
	if len(matches) == 0 {
		msg = fmt.Sprintf("No matches for %q under %s.", p.Pattern, vfspath.Where(dir))
	}
	if res.Truncated {
		msg += fmt.Sprintf("\n[truncated: only the first %d matches are shown]", MaxResults)
	}
	return pdk.OK(msg, grepResult{Matches: matches, Truncated: res.Truncated}), nil
}
