// Package rules is the decision logic of the blocklist policy, in plain Go
// so the Wasm plugin (policies/blocklist) and the tests share it.
//
// A command is denied when it is longer than the command limit, when its
// text contains one of the blocked patterns (the default list of docs/ARCHITECTURE.md, matched on
// whitespace-normalised text), or when a structural rule recognises it
// from its words: recursive rm or chmod/chown of the root, the home
// directory or a top-level system directory (however the flags are
// spelled, through /bin/rm, sudo, env, xargs or sh -c), mkfs, dd from
// /dev/zero or onto a disk, writes to a disk device, a fork bomb, a
// download piped into a shell, shutdown/reboot/halt/poweroff (systemctl,
// init 0/6 too), or kill -1. A script's interpreter line is judged as
// the argv the backends run, and the structural rules read a script
// whenever sh or bash reads it. What it does not catch is listed in
// RATIONALE.md ("The blocklist is a seatbelt").
package rules

import (
	"fmt"
	"strings"

	"github.com/wai-dev/wai/policies/internal/plugconf"
	"github.com/wai-dev/wai/policies/internal/shellparse"
)

// DefaultPatterns are the default blocked patterns (docs/ARCHITECTURE.md).
var DefaultPatterns = []string{
	"rm -rf /",
	"rm -rf /*",
	"mkfs",
	"dd if=/dev/zero",
	":(){ :|:& };:",
	"> /dev/sda",
	"chmod -R 777 /",
	"curl | sh",
	"wget | sh",
}

// patternWhy says what each default pattern guards against (docs/ARCHITECTURE.md's
// table), for deny reasons.
var patternWhy = map[string]string{
	"rm -rf /":        "recursive root deletion",
	"rm -rf /*":       "recursive root deletion",
	"mkfs":            "filesystem formatting",
	"dd if=/dev/zero": "disk overwrite",
	":(){ :|:& };:":   "fork bomb",
	"> /dev/sda":      "direct disk write",
	"chmod -R 777 /":  "recursive permission change",
	"curl | sh":       "remote code execution",
	"wget | sh":       "remote code execution",
}

// DefaultMaxCommandBytes is the command length limit (docs/ARCHITECTURE.md).
const DefaultMaxCommandBytes = 4096

// Rule names, for Config.DisableRules and in reasons.
const (
	RuleLength   = "length"
	RulePattern  = "pattern"
	RuleRmRoot   = "rm-root"
	RuleChmod    = "chmod-root"
	RuleMkfs     = "mkfs"
	RuleDD       = "dd"
	RuleDisk     = "disk-write"
	RuleForkBomb = "fork-bomb"
	RulePipeSh   = "download-to-shell"
	RuleFind     = "find-delete-root"
)

var allRules = []string{RuleLength, RulePattern, RuleRmRoot, RuleChmod, RuleMkfs, RuleDD, RuleDisk, RuleForkBomb, RulePipeSh, RuleFind, RulePower}

// Config is the policy's configuration ([[policies]] config = {…}).
type Config struct {
	// Patterns replace DefaultPatterns when non-nil.
	Patterns []string `json:"patterns"`
	// ExtraPatterns are blocked in addition to Patterns.
	ExtraPatterns []string `json:"extra_patterns"`
	// MaxCommandBytes bounds argv joined with spaces, or a shell string
	// (default 4096; scripts are bounded by the host's limits instead).
	MaxCommandBytes int `json:"max_command_bytes"`
	// DisableRules turns structural rules off by name.
	DisableRules []string `json:"disable_rules"`
}

// ParseConfig decodes a JSON config strictly; empty input is the default.
func ParseConfig(raw []byte) (Config, error) {
	var c Config
	if err := plugconf.Decode(raw, &c); err != nil {
		return c, fmt.Errorf("blocklist config: %v (keys: patterns, extra_patterns, max_command_bytes, disable_rules)", err)
	}
	return c, nil
}

// Request is the part of a policy check the blocklist looks at.
type Request struct {
	Action  string   // shell.exec, shell.script, fs.*
	Command []string // argv (["/bin/sh","-c",Shell] for a shell string), or a script's interpreter
	Shell   string   // the shell string of shell.exec, if any
	Script  string   // the text of shell.script
}

// Blocklist decides requests. It is immutable and safe for concurrent use.
type Blocklist struct {
	patterns []pattern
	maxBytes int
	off      map[string]bool
}

type pattern struct {
	raw        string
	norm       string // operators spaced, whitespace collapsed
	stripped   string // all whitespace removed, for symbol-only patterns
	leftBound  bool   // starts with a word character: must not follow one
	rightBound bool   // ends with '/': must not be followed by a name character
}

// New builds a blocklist from its config.
func New(c Config) (*Blocklist, error) {
	b := &Blocklist{maxBytes: c.MaxCommandBytes, off: map[string]bool{}}
	if b.maxBytes == 0 {
		b.maxBytes = DefaultMaxCommandBytes
	}
	if b.maxBytes < 0 {
		return nil, fmt.Errorf("blocklist config: max_command_bytes must be positive, got %d", c.MaxCommandBytes)
	}
	pats := c.Patterns
	if pats == nil {
		pats = DefaultPatterns
	}
	for _, p := range append(append([]string{}, pats...), c.ExtraPatterns...) {
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("blocklist config: empty pattern")
		}
		b.patterns = append(b.patterns, newPattern(p))
	}
	for _, r := range c.DisableRules {
		known := false
		for _, k := range allRules {
			known = known || k == r
		}
		if !known {
			return nil, fmt.Errorf("blocklist config: unknown rule %q in disable_rules (rules: %s)", r, strings.Join(allRules, ", "))
		}
		b.off[r] = true
	}
	return b, nil
}

// Default is the blocklist with its default config.
func Default() *Blocklist {
	b, err := New(Config{})
	if err != nil {
		panic(err) // the defaults are valid; a test keeps them so
	}
	return b
}

func newPattern(p string) pattern {
	n := normalize(p)
	pt := pattern{raw: p, norm: n, stripped: stripSpace(p)}
	pt.leftBound = isWordByte(n[0])
	pt.rightBound = n[len(n)-1] == '/'
	return pt
}

// Check returns whether the request may run and, when not, why.
func (b *Blocklist) Check(req Request) (allow bool, reason string) {
	switch req.Action {
	case "shell.exec":
		text := req.Shell
		if text == "" {
			text = strings.Join(req.Command, " ")
		}
		if !b.off[RuleLength] && len(text) > b.maxBytes {
			return false, fmt.Sprintf("command is %d bytes, over the blocklist limit of %d", len(text), b.maxBytes)
		}
		if r := b.checkText(text); r != "" {
			return false, r
		}
		if r := b.judge(shellparse.AnalyzeRequest(req.Command, req.Shell)); r != "" {
			return false, r
		}
	case "shell.script":
		if r := b.checkScript(req); r != "" {
			return false, r
		}
	}
	return true, ""
}

// checkScript applies the patterns to a script's text and, when a shell
// whose language the blocklist reads runs it, the structural rules to its
// commands. The interpreter line is an argv the backends run (with the
// script as its last argument or input), so it is judged like one: a
// line "rm -rf /" or "reboot" runs that, and the shell that reads the
// script may come after a wrapper ("/usr/bin/env bash", "sudo sh").
func (b *Blocklist) checkScript(req Request) string {
	if r := b.checkText(req.Script); r != "" {
		return r
	}
	line := ""
	if len(req.Command) > 0 {
		line = req.Command[0]
	}
	interp, reader := shellparse.AnalyzeInterpreter(line)
	d := shellparse.POSIX // no interpreter: the backends run /bin/sh
	if reader != nil {
		if r := b.checkText(line); r != "" {
			return r
		}
		if r := b.judge(interp); r != "" {
			return r
		}
		var ok bool
		if d, ok = shellparse.DialectOf(reader.Name()); !ok {
			// Not a shell, or one whose language the blocklist does not
			// read: the patterns above still apply.
			return ""
		}
	}
	return b.judge(shellparse.AnalyzeShell(req.Script, d))
}

// checkText applies the patterns and the fork-bomb rule to text.
func (b *Blocklist) checkText(text string) string {
	if r := b.matchPatterns(text); r != "" {
		return r
	}
	if !b.off[RuleForkBomb] && forkBomb(text) {
		return "fork bomb"
	}
	return ""
}

// matchPatterns returns a reason when text contains a blocked pattern.
func (b *Blocklist) matchPatterns(text string) string {
	if b.off[RulePattern] || text == "" {
		return ""
	}
	norm := normalize(text)
	var stripped string
	for _, p := range b.patterns {
		if p.symbolsOnly() {
			if stripped == "" {
				stripped = stripSpace(text)
			}
			if strings.Contains(stripped, p.stripped) {
				return p.reason()
			}
			continue
		}
		if p.matches(norm) {
			return p.reason()
		}
	}
	return ""
}

func (p pattern) reason() string {
	if why, ok := patternWhy[p.raw]; ok {
		return fmt.Sprintf("command contains blocked pattern %q (%s)", p.raw, why)
	}
	return fmt.Sprintf("command contains blocked pattern %q", p.raw)
}

func (p pattern) symbolsOnly() bool {
	for i := 0; i < len(p.stripped); i++ {
		if isWordByte(p.stripped[i]) {
			return false
		}
	}
	return true
}

func (p pattern) matches(norm string) bool {
	for off := 0; ; {
		i := strings.Index(norm[off:], p.norm)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(p.norm)
		okLeft := !p.leftBound || i == 0 || !isWordByte(norm[i-1])
		okRight := !p.rightBound || end == len(norm) || !isNameByte(norm[end])
		if okLeft && okRight {
			return true
		}
		off = i + 1
	}
}

// normalize spaces shell operators and collapses whitespace, so "curl x|sh"
// and "curl x | sh", or ">/dev/sda" and "> /dev/sda", read the same.
func normalize(s string) string {
	var sb strings.Builder
	sb.Grow(len(s) + 16)
	space := false
	emit := func(c byte) {
		if space && sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		space = false
		sb.WriteByte(c)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space = true
		case c == '|' || c == ';' || c == '&' || c == '<' || c == '>':
			space = true
			emit(c)
			space = true
		default:
			emit(c)
		}
	}
	return sb.String()
}

func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isNameByte(c byte) bool { return isWordByte(c) || c == '.' || c == '-' }
