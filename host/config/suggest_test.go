package config

import (
	"strings"
	"testing"
)

func TestConfigKeySuggestion(t *testing.T) {
	for _, c := range []struct {
		key  []string
		want string
	}{
		{[]string{"defualt_policies"}, "default_policies"},
		{[]string{"limits", "max_outptu_bytes"}, "limits.max_output_bytes"},
		{[]string{"plugins", "grant"}, "plugins.grants"},
		{[]string{"mcp", "http_adr"}, "mcp.http_addr"},
		{[]string{"wat"}, ""},
		{[]string{"backends", "podman", "imag"}, ""}, // free-form: the backend checks its own keys
	} {
		if got := configKeySuggestion(c.key); got != c.want {
			t.Errorf("configKeySuggestion(%q) = %q, want %q", c.key, got, c.want)
		}
	}
}

func TestTOMLAdvice(t *testing.T) {
	for data, want := range map[string]string{
		"backend = \"host\"\n[backend.podman]\nimage = \"x\"\n": `line 2: Key 'backend' was already created as a hash. (a [backend.…] header makes "backend" a table, but it is a plain key; did you mean [backends.…]?`,
		"backend = podman\n": `expected value but found "podman" instead (TOML strings need quotes: key = "value")`,
		// A duration without its unit, and one that is no duration at all.
		"[limits]\ndefault_timeout = \"30\"\n": `invalid duration: "30" (a duration needs its unit: write "30s" for seconds`,
		"policy_timeout = \"soon\"\n":          `invalid duration: "soon" (a duration is a number and its unit, such as "30s"`,
		// A number, not a string: TOML's type name read "not a Integer".
		"policy_timeout = 5\n": `policy_timeout at line 1 must be a duration string such as "30s" or "15m", not the bare number 5: write "5s" for seconds`,
	} {
		_, err := Parse([]byte(data))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: want an error containing %q, got %v", data, want, err)
		}
	}
}
