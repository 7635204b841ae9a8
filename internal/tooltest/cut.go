package tooltest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// cutMarker matches the marker the command tools put where they cut a
// stream (tools/internal/shellfmt): the bytes dropped, then what to do.
var cutMarker = regexp.MustCompile(`\n\.\.\.\[truncated (\d+) bytes(: [^\]]*)?\]\.\.\.\n`)

// CheckCut returns an error unless s, a stream of total bytes cut to fit a
// budget, holds exactly one marker, counting the bytes it lacks (the
// host's cut and the tool's together), and, when hint is set, saying to
// write the output to a file.
func CheckCut(s string, total int, hint bool) error {
	m := cutMarker.FindAllStringSubmatch(s, -1)
	if len(m) != 1 || strings.Count(s, "[truncated") != 1 {
		return fmt.Errorf("want one truncation marker, got %d in %.200q", strings.Count(s, "[truncated"), s)
	}
	n, _ := strconv.Atoi(m[0][1])
	if kept := len(cutMarker.ReplaceAllString(s, "")); n != total-kept {
		return fmt.Errorf("marker counts %d bytes, but %d of %d are missing", n, total-kept, total)
	}
	if hint && !strings.Contains(m[0][2], "to a file") {
		return fmt.Errorf("marker %q does not say to write the output to a file", strings.TrimSpace(m[0][0]))
	}
	return nil
}
