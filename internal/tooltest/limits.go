package tooltest

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
)

// NarrowLimits configures limits narrower than the model-facing contract's
// (1–120 s, 30 s by default, 32 KiB of output): a tool that states or
// applies numbers of its own instead of the host's shows up against them.
func NarrowLimits(cfg *host.Config) {
	cfg.Limits.MaxTimeout, cfg.Limits.DefaultTimeout, cfg.Limits.MaxOutputBytes = 20*time.Second, 10*time.Second, 1000
}

// narrowLimitsStated is how a tool's description states NarrowLimits.
const narrowLimitsStated = "timeout_seconds defaults to 10 s and is clamped to 1–20 s; " +
	"stdout and stderr are each cut to at most 1000 bytes"

// contractNumbers are what the tools' own texts said before their limits
// became the host's: any of them in a description or schema would
// contradict NarrowLimits.
var contractNumbers = regexp.MustCompile(`\b(120|30)\b|32 KiB|1-120`)

// CheckLimitsStated reports each tool of e whose description does not
// state NarrowLimits, or whose description or schema still names a number
// of the contract's.
func CheckLimitsStated(t testing.TB, e *Env) {
	t.Helper()
	for _, tool := range e.Kernel.Tools() {
		if !strings.Contains(tool.Description, narrowLimitsStated) ||
			contractNumbers.MatchString(tool.Description+string(tool.InputSchema)) {
			t.Errorf("%s does not state the configured limits alone:\n%s\n%s", tool.Name, tool.Description, tool.InputSchema)
		}
	}
}

// CheckLastTimeout reports, on the mock, a last command that reached the
// backend with another timeout than want; elsewhere it checks nothing
// (the tool's result says which timeout applied).
func (e *Env) CheckLastTimeout(t testing.TB, what string, want time.Duration) {
	t.Helper()
	if e.Mock == nil {
		return
	}
	calls := e.Mock.Calls()
	if len(calls) == 0 {
		t.Errorf("%s reached no backend", what)
		return
	}
	if got := calls[len(calls)-1].Exec.Timeout; got != want {
		t.Errorf("%s reached the backend with timeout %s, want %s", what, got, want)
	}
}
