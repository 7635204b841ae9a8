// Package cmdlimits is the timeout range and output budget of the bundled
// command tools (shell_execute, podman_shell; evaluate_python fits its
// fixed 5 s into the range): the contract's timeout (a
// default of 30 s, clamped to 1–120 s) narrowed to what the host's
// [limits] accept, and the host's max_output_bytes per stream. A tool
// that used the contract's numbers alone would send a timeout the host
// refuses whenever the operator configured a narrower range, for a value
// the model never gave. The host renders the same numbers into the
// tools' descriptions (host/info.go, limitsNote); keep the two in step.
package cmdlimits

import (
	"errors"
	"math"
	"time"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/shellfmt"
)

// The contract's numbers (docs/ARCHITECTURE.md).
const (
	contractMin     = time.Second
	contractDefault = 30 * time.Second
	contractMax     = 120 * time.Second
	// defaultOutputBytes bounds each stream when the host does not say
	// (its own default, which it still enforces).
	defaultOutputBytes = 32 << 10
)

// Limits are a tool's timeout range and output budget.
type Limits struct {
	Min, Default, Max time.Duration
	// OutputBytes bounds each stream: the host's max_output_bytes.
	OutputBytes int
}

// Load asks the host for its limits and narrows the contract to them. A
// host that cannot say (ErrUnavailable: an embedding that serves no
// limits) leaves the contract as it is; the host still checks what it
// is sent.
func Load() (Limits, error) {
	h, err := pdk.Shell.Limits()
	if errors.Is(err, pdk.ErrUnavailable) {
		return From(pdk.ShellLimits{}), nil
	}
	if err != nil {
		return Limits{}, err
	}
	return From(h), nil
}

// From narrows the contract to the host's limits h (zero: unknown). Every
// timeout in the result lies within h's range, even where that leaves the
// contract's (a host maximum under 1 s), since the host refuses the rest.
func From(h pdk.ShellLimits) Limits {
	out := defaultOutputBytes
	if h.MaxOutputBytes > 0 {
		out = h.MaxOutputBytes
	}
	if h.MaxTimeout <= 0 {
		return Limits{Min: contractMin, Default: contractDefault, Max: contractMax, OutputBytes: out}
	}
	lo := min(max(contractMin, h.MinTimeout), h.MaxTimeout)
	hi := max(lo, min(contractMax, h.MaxTimeout))
	def := contractDefault
	if h.DefaultTimeout > 0 {
		def = h.DefaultTimeout
	}
	return Limits{Min: lo, Default: min(max(def, lo), hi), Max: hi, OutputBytes: out}
}

// Timeout returns the timeout for timeout_seconds as asked (nil: the
// default). NaN is refused rather than clamped, since it says nothing
// about what the caller wanted; a value outside the range is clamped, not
// refused (the contract's rule), and note says so: a model that asked for
// 200 s and got a kill at 20 s must be able to tell why, and what to use
// instead.
func (l Limits) Timeout(asked *float64) (d time.Duration, note string, err error) {
	if asked == nil {
		return l.Default, "", nil
	}
	s := *asked
	if math.IsNaN(s) {
		return 0, "", pdk.Errorf(pdk.KindInvalid, "timeout_seconds is NaN: give a number of seconds between %s and %s",
			shellfmt.Seconds(l.Min), shellfmt.Seconds(l.Max))
	}
	lo, hi := l.Min.Seconds(), l.Max.Seconds()
	note = shellfmt.ClampNote(s, lo, hi)
	s = min(max(s, lo), hi)
	return time.Duration(s * float64(time.Second)), note, nil
}
