package config

import (
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
)

func TestSoftTimeoutConfig(t *testing.T) {
	cfg, err := Parse([]byte(`
[soft_timeouts.shell_execute]
after = "60s"
extend_by = "30s"
hard_cap = "10m"
unattended = "auto_extend"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := host.SoftTimeout{After: time.Minute, ExtendBy: 30 * time.Second, HardCap: 10 * time.Minute, Unattended: host.SoftAutoExtend}
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
		_, err := Parse([]byte("[soft_timeouts.run]\n" + toml + "\n"))
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: got %v, want an error saying %q", toml, err, msg)
		}
	}
}
