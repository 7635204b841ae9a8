package host

import (
	"testing"
	"time"
)

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
