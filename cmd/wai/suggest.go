package main

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/wai-dev/wai/host/backend"
)

// subcommandSuggestion is ": did you mean X?" for a mistyped subcommand, or
// "" when nothing is close.
func subcommandSuggestion(name string) string {
	if n := backend.Nearest(name, slices.Sorted(maps.Keys(commands))); n != "" {
		return fmt.Sprintf(": did you mean %q?", n)
	}
	return ""
}

// flagSuggestion adds to a flag parse error what the flag package cannot
// say: the flag the user probably meant, or the unit a duration lacks.
// The flag package has printed err itself; "" adds nothing.
func flagSuggestion(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if n := backend.Nearest(strings.TrimLeft(name, "-"), names); n != "" {
			return fmt.Sprintf("did you mean --%s?", n)
		}
		return ""
	}
	// invalid value "5" for flag -timeout: parse error
	var value, name string
	if _, err := fmt.Sscanf(msg, "invalid value %q for flag -%s", &value, &name); err != nil {
		return ""
	}
	name = strings.TrimSuffix(name, ":")
	f := fs.Lookup(name)
	if f == nil || !isDurationFlag(f) {
		return ""
	}
	if _, err := strconv.ParseFloat(value, 64); err == nil {
		return fmt.Sprintf("--%s takes a duration with a unit: did you mean %ss?", name, value)
	}
	return fmt.Sprintf("--%s takes a duration such as 30s, 1m30s or 500ms", name)
}

// isDurationFlag: the flag package's duration values print as durations
// and have no exported type to test for.
func isDurationFlag(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	_, ok = g.Get().(time.Duration)
	return ok
}

// printable escapes control characters (a terminal would act on them) in
// text that may carry user input, keeping newlines and tabs as they are.
func printable(s string) string {
	if !strings.ContainsFunc(s, isEscaped) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isEscaped(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isEscaped(r rune) bool {
	return r != '\n' && r != '\t' && (unicode.IsControl(r) || r == unicode.ReplacementChar)
}
