// Package shellfmt holds what the command-running tool plugins
// (shell_execute, evaluate_python, podman_shell) share: bounding a stream to
// what a model should read, and rendering a command's result as the text
// block the model reads. Keeping one renderer keeps the three tools' output
// alike, so a model that learned one reads the others.
package shellfmt

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wai-dev/wai/pdk"
)

// Empty stands in for a stream that printed nothing: a bare header with
// nothing under it reads like a rendering bug.
const Empty = "<empty>"

// CaptureDisabled is what both streams read when the caller asked not to
// capture output (docs/ARCHITECTURE.md).
const CaptureDisabled = "capture disabled"

// Headline says a command's outcome in one line, Block's first: it
// succeeded, failed with its exit code, or timed out (with the exit code
// a timeout reports, pdk.TimeoutExitCode). limit, when not zero, is the
// time the command was given, for a tool whose caller chose it.
func Headline(exitCode int, timedOut bool, limit time.Duration) string {
	switch {
	case timedOut && limit > 0:
		return fmt.Sprintf("Command timed out after %s s (exit code %d).", Seconds(limit), pdk.TimeoutExitCode)
	case timedOut:
		return fmt.Sprintf("Command timed out (exit code %d).", pdk.TimeoutExitCode)
	case exitCode != 0:
		return fmt.Sprintf("Command failed (exit code %d).", exitCode)
	}
	return "Command succeeded (exit code 0)."
}

// Field is one "Name: value" line of a Block.
type Field struct{ Name, Value string }

// Block renders a command's outcome for a model: a headline, the fields,
// then each stream under its own header with Empty for nothing, so the
// model never has to guess whether a stream was empty or missing.
func Block(headline string, fields []Field, stdout, stderr string) string {
	var b strings.Builder
	if headline != "" {
		b.WriteString(headline)
		b.WriteByte('\n')
	}
	for _, f := range fields {
		fmt.Fprintf(&b, "%s: %s\n", f.Name, f.Value)
	}
	stream(&b, "STDOUT", stdout)
	b.WriteByte('\n')
	stream(&b, "STDERR", stderr)
	return b.String()
}

func stream(b *strings.Builder, name, s string) {
	b.WriteString(name)
	b.WriteString(":\n")
	if s == "" {
		b.WriteString(Empty)
		return
	}
	b.WriteString(strings.TrimRight(s, "\n"))
}

// ClampNote says that timeout_seconds asked was clamped into [min, max],
// or is "" when it was in range: a model that asked for 200 s and was
// killed at 120 s must be able to tell why, and what to use instead.
func ClampNote(asked, min, max float64) string {
	a := strconv.FormatFloat(asked, 'g', -1, 64)
	switch {
	case asked > max:
		return fmt.Sprintf("timeout_seconds %s is over the %g s maximum, so the command ran with %g s; "+
			"run longer work as a background job (job_start, where offered)", a, max, max)
	case asked < min:
		return fmt.Sprintf("timeout_seconds %s is under the %g s minimum, so the command ran with %g s", a, min, min)
	}
	return ""
}

// Seconds renders d as a number of seconds the way timeout_seconds takes
// it: "20", "2.5".
func Seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', -1, 64) }

// Millis is a duration in whole milliseconds, the unit results report.
func Millis(d time.Duration) int64 { return d.Milliseconds() }

// Quote renders argv the way a model would type it: plain words bare,
// anything else single-quoted, so the echoed command is unambiguous.
func Quote(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = quoteArg(a)
	}
	return strings.Join(parts, " ")
}

func quoteArg(a string) string {
	if a == "" {
		return "''"
	}
	for _, c := range a {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=:,+@%", c)) {
			return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return a
}
