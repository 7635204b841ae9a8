package main

import (
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/tooltest"
)

// With [limits] max_timeout = "20s" and default_timeout = "10s" a call
// without timeout_seconds runs with the host's default (it used to send
// 30 s and be refused), a longer one is clamped to 20 s and says so, the
// streams are cut at max_output_bytes, and the description states those
// numbers and no other. The host and the mock cover the tool's side; the
// podman backend checks the same limits with the same kernel code.
func TestLimitsFollowTheConfig(t *testing.T) {
	t.Parallel() // kernels and sessions of its own
	backends := tooltest.Only(t, func(b tooltest.Backend) bool { return b.Name != "podman" })
	tooltest.RunOn(t, backends, []string{"tools/shell"}, tooltest.NarrowLimits, func(t *testing.T, e *tooltest.Env) {
		tooltest.CheckLimitsStated(t, e)
		call := func(params string, wantTimeout time.Duration) (host.ToolResult, shellValue) {
			t.Helper()
			res, err := e.CallIn(t, "shell-limits-config", "shell_execute", params)
			if err != nil {
				t.Fatalf("%s: %v", params, err)
			}
			var v shellValue
			tooltest.Value(t, res, &v)
			if v.TimeoutSeconds != wantTimeout.Seconds() {
				t.Errorf("%s: the result says it ran with %v s, want %s", params, v.TimeoutSeconds, wantTimeout)
			}
			e.CheckLastTimeout(t, params, wantTimeout)
			return res, v
		}
		if res, _ := call(`{"command":["echo","no-timeout"]}`, 10*time.Second); !res.OK || strings.Contains(res.Message, "Timeout:") {
			t.Errorf("no timeout_seconds: %+v", res)
		}
		res, v := call(`{"command":["echo","long-timeout"],"timeout_seconds":60}`, 20*time.Second)
		if note := "timeout_seconds 60 is over the 20 s maximum, so the command ran with 20 s"; !res.OK || !strings.Contains(res.Message, note) || !strings.HasPrefix(v.TimeoutNote, note) {
			t.Errorf("timeout_seconds 60 against a 20 s maximum: %+v %+v", res, v)
		}
		if e.Mock != nil {
			e.Mock.AddResponse("head -c 5000", backend.ExecResult{Stdout: strings.Repeat("a", 5000)})
		}
		_, v = call(`{"command":["sh","-c","head -c 5000 /dev/zero | tr '\\0' a"]}`, 10*time.Second)
		if len(v.Stdout) > 1000 || !strings.HasPrefix(v.Stdout, "aaaa") || !strings.HasSuffix(v.Stdout, "aaaa") {
			t.Errorf("stdout of 5,000 bytes under max_output_bytes = 1000 came back as %d bytes", len(v.Stdout))
		}
		if err := tooltest.CheckCut(v.Stdout, 5000, true); err != nil {
			t.Error(err)
		}
	})
}
