package abitest

import (
	"errors"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// checkToolErrorCodes: a tool error's code (docs/ABI.md §5) reaches the
// caller as the sentinel it names, only on its own kind; an unknown code
// is ignored, and an error without one is a plain refusal.
func checkToolErrorCodes(t *testing.T, c *check) {
	for _, tc := range []struct {
		kind, code string
		want       error
		failed     bool
	}{
		{"permission", "policy_failed", backend.ErrPermission, true},
		{"permission", "", backend.ErrPermission, false},
		{"permission", "not_a_code", backend.ErrPermission, false},
		{"invalid", "policy_failed", backend.ErrInvalid, false},
	} {
		_, err := c.call("fail_code", map[string]any{"kind": tc.kind, "code": tc.code})
		switch {
		case err == nil:
			t.Errorf("tool error %s/%q: the call succeeded", tc.kind, tc.code)
		case backend.KindOf(err) != tc.want || errors.Is(err, backend.ErrPolicyFailed) != tc.failed:
			t.Errorf("tool error %s/%q reached the caller as %s (%v), policy failed %v; want policy failed %v",
				tc.kind, tc.code, errKind(err), err, errors.Is(err, backend.ErrPolicyFailed), tc.failed)
		case !strings.Contains(err.Error(), "passing on: failing with code "+tc.code):
			t.Errorf("tool error %s/%q lost its message: %v", tc.kind, tc.code, err)
		}
	}
}
