package host

import (
	"strings"
	"testing"
	"time"
)

func TestSoftTimeoutConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
[soft_timeouts.shell_execute]
after = "60s"
extend_by = "30s"
hard_cap = "10m"
unattended = "auto_extend"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := SoftTimeout{After: time.Minute, ExtendBy: 30 * time.Second, HardCap: 10 * time.Minute, Unattended: SoftAutoExtend}
	if got := cfg.SoftTimeouts["shell_execute"]; got != want {
		t.Errorf("parsed %+v, want %+v", got, want)
	}
	for toml, msg := range map[string]string{
		`after = "60s"` + "\n" + `hard_cap = "30s"`:                           "hard_cap (30s) must be at least after",
		`after = "60s"` + "\n" + `hard_cap = "11m"`:                           "must not exceed limits.max_timeout",
		`hard_cap = "60s"`:                                                    "after must be positive",
		`after = "1s"` + "\n" + `hard_cap = "2s"` + "\n" + `unattended = "x"`: `unattended must be "stop" or "auto_extend"`,
		`after = "1s"` + "\n" + `hard_cap = "2s"` + "\n" + `wait = "1s"`:      `unknown key`,
	} {
		_, err := ParseConfig([]byte("[soft_timeouts.run]\n" + toml + "\n"))
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: got %v, want an error saying %q", toml, err, msg)
		}
	}
}

// The soft deadline is the config's, shortened (never lengthened) by the
// command's own timeout; the command runs under the hard cap.
func TestSoftTimeoutPlan(t *testing.T) {
	k := &Kernel{cfg: DefaultConfig()}
	s := &Session{k: k}
	ctx, _ := withSoftCall(t.Context(), SoftTimeout{After: 60 * time.Second, HardCap: 300 * time.Second})
	for _, c := range []struct{ requested, soft time.Duration }{
		{0, 30 * time.Second},                 // the limits' default timeout shortens it
		{10 * time.Second, 10 * time.Second},  // the model shortens it
		{120 * time.Second, 60 * time.Second}, // and cannot lengthen it
	} {
		timeout, plan := s.softTimeout(ctx, c.requested, "cmd")
		if timeout != 300*time.Second || plan == nil || plan.soft != c.soft {
			t.Errorf("requested %s: timeout %s, plan %+v; want the hard cap and soft %s", c.requested, timeout, plan, c.soft)
		}
	}
	if timeout, plan := s.softTimeout(t.Context(), 7*time.Second, "cmd"); timeout != 7*time.Second || plan != nil {
		t.Errorf("a tool without a soft timeout: %s %+v", timeout, plan)
	}
}
