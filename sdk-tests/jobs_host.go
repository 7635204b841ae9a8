package sdktests

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// hostProcessesWith lists the processes of this machine whose command
// line holds marker. A sandboxed backend's commands cannot see another
// session's processes, but the machine running the tests can (the
// container runs here), and a closed session leaves no workspace to look
// from.
func hostProcessesWith(marker string) []string {
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var out []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		out = append(out, p+": "+strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))))
	}
	return out
}
