package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// A bundled policy's bad config is the caller's mistake (ErrInvalid)
// naming what is wrong, whether parsing it or building the rules refuses.
func TestBundledPolicyBadConfig(t *testing.T) {
	for _, c := range []struct{ name, raw, want string }{
		{"blocklist", `{"nope": 1}`, "keys: patterns"},
		{"blocklist", `{"max_command_bytes": -1}`, "max_command_bytes must be positive"},
		{"allowlist", `{"nope": 1}`, "keys: commands"},
		{"allowlist", `{"commands": ["a/b"]}`, "is not a command name"},
		{"container_safety", `{"nope": 1}`, "nope"},
	} {
		_, err := bundledPolicy(context.Background(), c.name, []byte(c.raw))
		if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with %s: %v, want ErrInvalid saying %q", c.name, c.raw, err, c.want)
		}
	}
}
