package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/vfspath"
)

// Limits of the contract (docs/ARCHITECTURE.md).
const (
	maxCodeChars   = 2000
	maxStreamChars = 4096
	maxWriteChars  = 48000
	maxWrites      = 32 // writes entries plus write_text calls
	maxReads       = 32
	maxGlobals     = 64  // globals given
	maxGlobalsOut  = 256 // globals reported
	maxReprChars   = 4096
)

type params struct {
	Code    string            `json:"code" jsonschema:"Python 3 source, at most 2,000 characters; no control characters but tab and newline"`
	Mode    string            `json:"mode,omitempty" enum:"expr,statements" default:"expr" jsonschema:"expr: one expression whose value is returned (no assignments); statements: statements, returning the value of the last one when it is an expression"`
	Globals map[string]string `json:"globals,omitempty" jsonschema:"names bound before the code runs; each value is JSON text, e.g. {\"n\": \"3\", \"names\": \"[\\\"a\\\"]\"}"`
	Reads   []readSpec        `json:"reads,omitempty" maxItems:"32" jsonschema:"workspace files whose text is bound in the globals under their path (globals[\"data/a.csv\"]) and in vfs_reads"`
	Writes  []writeSpec       `json:"writes,omitempty" maxItems:"32" jsonschema:"files written after the code succeeds (none if it fails or times out); content may hold {name} templates filled from the final globals (str.format_map; a literal brace is {{ or }})"`
}

type readSpec struct {
	Path string `json:"path" jsonschema:"file relative to the workspace root"`
}

type writeSpec struct {
	Path    string `json:"path" jsonschema:"file relative to the workspace root"`
	Content string `json:"content" jsonschema:"text, at most 48,000 characters once rendered"`
	Mode    string `json:"mode,omitempty" enum:"create,overwrite,append" default:"create" jsonschema:"create fails if the file exists; overwrite and append need the file read in this session first when it exists"`
}

// invalid is a validation error: the call is refused before anything runs.
func invalid(format string, args ...any) error {
	return pdk.Errorf(pdk.KindInvalid, format, args...)
}

// checked is a call's params once validated: paths normalised, modes set.
type checked struct {
	code, mode string
	globals    map[string]string
	reads      []string
	writes     []writeSpec
}

func check(p params) (checked, error) {
	c := checked{code: p.Code, mode: p.Mode, globals: p.Globals}
	if c.mode == "" {
		c.mode = "expr"
	}
	if c.mode != "expr" && c.mode != "statements" {
		return c, invalid("mode %q is neither \"expr\" nor \"statements\"", p.Mode)
	}
	if err := checkCode(p.Code); err != nil {
		return c, err
	}
	if err := checkGlobals(p.Globals); err != nil {
		return c, err
	}
	var err error
	if c.reads, err = checkReads(p.Reads, p.Globals); err != nil {
		return c, err
	}
	if c.writes, err = checkWrites(p.Writes, c.reads); err != nil {
		return c, err
	}
	return c, nil
}

func checkCode(code string) error {
	if code == "" {
		return invalid("code is empty: give the Python source to run")
	}
	if !utf8.ValidString(code) {
		return invalid("code is not valid UTF-8")
	}
	if n := utf8.RuneCountInString(code); n > maxCodeChars {
		return invalid("code is %d characters, over the limit of 2,000: write a script to a file and run it with shell_execute", n)
	}
	for i, r := range code {
		if unicode.IsControl(r) && r != '\t' && r != '\n' {
			return invalid("code contains the control character %U at byte %d: only tab and newline are allowed (write others as escapes such as \\x00 in a string)", r, i)
		}
	}
	return nil
}

// reserved are the names the driver binds; a global may not hide them.
var reserved = []string{"read_text", "write_text", "vfs_reads"}

func checkGlobals(g map[string]string) error {
	if len(g) > maxGlobals {
		return invalid("globals has %d names, over the limit of %d", len(g), maxGlobals)
	}
	for _, name := range slices.Sorted(maps.Keys(g)) {
		if !identifier(name) {
			return invalid("globals: %q is not a Python identifier (ASCII letters, digits and _, not starting with a digit, not a keyword)", name)
		}
		if slices.Contains(reserved, name) || strings.HasPrefix(name, "__") {
			return invalid("globals: %q is reserved (the helpers %v and names starting with __): choose another name", name, reserved)
		}
		if !json.Valid([]byte(g[name])) {
			return invalid("globals[%q] is not valid JSON: %q; give a JSON text, e.g. \"3\", \"\\\"text\\\"\" or \"[1, 2]\"", name, clip(g[name], 80))
		}
	}
	return nil
}

func checkReads(reads []readSpec, globals map[string]string) ([]string, error) {
	if len(reads) > maxReads {
		return nil, invalid("reads has %d entries, over the limit of %d", len(reads), maxReads)
	}
	out := make([]string, 0, len(reads))
	for i, r := range reads {
		p, err := vfspath.File(fmt.Sprintf("reads[%d].path", i), r.Path)
		if err != nil {
			return nil, invalid("%v", err)
		}
		if slices.Contains(out, p) {
			return nil, invalid("reads[%d]: %s is listed twice: read each file once", i, vfspath.Display(p))
		}
		if _, clash := globals[p]; clash {
			return nil, invalid("reads[%d]: %s is also a name in globals: rename the global", i, vfspath.Display(p))
		}
		out = append(out, p)
	}
	return out, nil
}

func checkWrites(writes []writeSpec, reads []string) ([]writeSpec, error) {
	if len(writes) > maxWrites {
		return nil, invalid("writes has %d entries, over the limit of %d", len(writes), maxWrites)
	}
	out := make([]writeSpec, 0, len(writes))
	for i, w := range writes {
		p, err := vfspath.File(fmt.Sprintf("writes[%d].path", i), w.Path)
		if err != nil {
			return nil, invalid("%v", err)
		}
		switch {
		case slices.ContainsFunc(out, func(o writeSpec) bool { return o.Path == p }):
			return nil, invalid("writes[%d]: %s is listed twice: combine the contents into one write", i, vfspath.Display(p))
		case slices.Contains(reads, p):
			return nil, invalid("writes[%d]: %s is also in reads: a call may not read and write the same file; write to another path", i, vfspath.Display(p))
		}
		mode := w.Mode
		if mode == "" {
			mode = string(pdk.WriteCreate)
		}
		if mode != string(pdk.WriteCreate) && mode != string(pdk.WriteOverwrite) && mode != string(pdk.WriteAppend) {
			return nil, invalid("writes[%d].mode %q is not one of create, overwrite, append", i, w.Mode)
		}
		if n := utf8.RuneCountInString(w.Content); n > maxWriteChars {
			return nil, invalid("writes[%d].content is %d characters, over the limit of 48,000", i, n)
		}
		if !utf8.ValidString(w.Content) {
			return nil, invalid("writes[%d].content is not valid UTF-8 text", i)
		}
		out = append(out, writeSpec{Path: p, Content: w.Content, Mode: mode})
	}
	return out, nil
}

var keywords = []string{"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
	"def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
	"nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"}

func identifier(s string) bool {
	if s == "" || len(s) > 80 || slices.Contains(keywords, s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "..."
}
