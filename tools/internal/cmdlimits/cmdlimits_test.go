package cmdlimits

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/pdk"
)

func hostLimits(def, lo, hi time.Duration) pdk.ShellLimits {
	return pdk.ShellLimits{DefaultTimeout: def, MinTimeout: lo, MaxTimeout: hi, MaxOutputBytes: 32 << 10}
}

// The contract's range narrowed to the host's: every timeout the tool can
// send lies within what the host accepts, and the contract's 1–120 s and
// 30 s stay where the host allows them.
func TestFromNarrowsToTheHost(t *testing.T) {
	const ms = time.Millisecond
	s := time.Second
	for _, c := range []struct {
		name          string
		host          pdk.ShellLimits
		min, def, max time.Duration
	}{
		{"unknown: the contract", pdk.ShellLimits{}, s, 30 * s, 120 * s},
		{"the default limits", hostLimits(30*s, 100*ms, 600*s), s, 30 * s, 120 * s},
		{"max 20 s, default 10 s", hostLimits(10*s, 100*ms, 20*s), s, 10 * s, 20 * s},
		{"a default over the contract's max", hostLimits(300*s, 100*ms, 600*s), s, 120 * s, 120 * s},
		{"a default under the contract's min", hostLimits(500*ms, 100*ms, 600*s), s, s, 120 * s},
		{"a host min over 1 s", hostLimits(10*s, 5*s, 20*s), 5 * s, 10 * s, 20 * s},
		{"a host max under 1 s", hostLimits(200*ms, 100*ms, 500*ms), 500 * ms, 500 * ms, 500 * ms},
		{"a host min over 120 s", hostLimits(200*s, 150*s, 300*s), 150 * s, 150 * s, 150 * s},
	} {
		l := From(c.host)
		if l.Min != c.min || l.Default != c.def || l.Max != c.max {
			t.Errorf("%s: got %s/%s/%s, want %s/%s/%s", c.name, l.Min, l.Default, l.Max, c.min, c.def, c.max)
		}
		if c.host.MaxTimeout > 0 && (l.Min < c.host.MinTimeout || l.Max > c.host.MaxTimeout) {
			t.Errorf("%s: %s–%s leaves the host's range %s–%s", c.name, l.Min, l.Max, c.host.MinTimeout, c.host.MaxTimeout)
		}
	}
}

// NaN cannot travel in JSON, so the kernel never delivers it; the rule is
// still the tools', checked where it lives. Out of range is clamped, and
// said; in range is not.
func TestTimeoutClampsAndSays(t *testing.T) {
	l := From(hostLimits(10*time.Second, 100*time.Millisecond, 20*time.Second))
	nan := math.NaN()
	if _, _, err := l.Timeout(&nan); err == nil || !strings.Contains(err.Error(), "timeout_seconds is NaN: give a number of seconds between 1 and 20") {
		t.Fatalf("NaN: %v", err)
	}
	for in, want := range map[float64]time.Duration{0: time.Second, -5: time.Second, 0.5: time.Second, 2.5: 2500 * time.Millisecond,
		20: 20 * time.Second, 21: 20 * time.Second, math.Inf(1): 20 * time.Second} {
		got, note, err := l.Timeout(&in)
		if err != nil || got != want {
			t.Errorf("Timeout(%v) = %v, %v; want %v", in, got, err, want)
		}
		if clamped := in != 2.5 && in != 20; (note != "") != clamped {
			t.Errorf("Timeout(%v) says %q; a note is wanted only when the value was clamped", in, note)
		}
	}
	if got, note, _ := l.Timeout(nil); got != 10*time.Second || note != "" {
		t.Errorf("no timeout_seconds: %v %q, want the host's default 10s and no note", got, note)
	}
	over := 60.0
	if _, note, _ := l.Timeout(&over); !strings.Contains(note, "over the 20 s maximum, so the command ran with 20 s") {
		t.Errorf("60 s against a 20 s maximum: %q", note)
	}
}

func TestOutputIsTheHosts(t *testing.T) {
	if got := From(pdk.ShellLimits{MaxOutputBytes: 1000}).OutputBytes; got != 1000 {
		t.Errorf("a host cap of 1000 bytes: budget %d", got)
	}
	if got := From(pdk.ShellLimits{}).OutputBytes; got != 32<<10 {
		t.Errorf("no host cap known: %d, want the host's default, 32 KiB", got)
	}
}
