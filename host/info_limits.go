package host

import (
	"fmt"
	"strconv"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// hostTimedTools are the bundled tools whose timeout_seconds takes its
// default and range from [limits], and whose streams are cut at
// limits.max_output_bytes (tools/internal/cmdlimits), by plugin and the
// plugin's own name for the tool. Their descriptions get those numbers as
// configured (limitsNote): a schema or description of their own could
// only state constants, which the configuration changes.
var hostTimedTools = map[[2]string]bool{
	{"shell", "shell_execute"}:       true,
	{"podman_shell", "podman_shell"}: true,
}

// hostTimed reports whether the tool's limits are the host's.
func hostTimed(t Tool) bool {
	name := t.Name
	if t.Original != "" {
		name = t.Original
	}
	return hostTimedTools[[2]string{t.Plugin, name}]
}

// bundledTimeouts is the timeout range of the host-timed tools: the
// contract's 1–120 s narrowed to the host's range, the default the
// host's own within it. tools/internal/cmdlimits computes the same from
// what wai_shell_limits answers; keep the two in step.
func bundledTimeouts(l backend.Limits) (lo, def, hi time.Duration) {
	lo = min(max(bundledMinTimeout, l.MinTimeout), l.MaxTimeout)
	hi = max(lo, min(bundledCommandTimeout, l.MaxTimeout))
	return lo, min(max(l.DefaultTimeout, lo), hi), hi
}

// limitsNote is the sentence the description of a host-timed tool ends
// with: its timeout and output bounds as configured.
func limitsNote(l backend.Limits) string {
	lo, def, hi := bundledTimeouts(l)
	return fmt.Sprintf("timeout_seconds defaults to %s s and is clamped to %s–%s s; stdout and stderr are each cut to at most %s (head and tail kept).",
		secs(def), secs(lo), secs(hi), byteSize(l.MaxOutputBytes))
}

// secs renders d as timeout_seconds takes it: "20", "0.5".
func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', -1, 64) }

// byteSize renders a byte count as a config would give it: "32 KiB",
// "1000 bytes".
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
