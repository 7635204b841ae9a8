package host

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

func TestDefaultConfigIsValid(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}
func TestValidateNamesTheKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"fallback", func(c *Config) { c.Fallback = "podman" }, "fallback"},
		{"self fallback", func(c *Config) { c.Backend, c.Fallback = "host", "host" }, "falls back to itself"},
		{"policy typo", func(c *Config) { c.Policies = []PolicyConfig{{Name: "alowlist"}} }, `did you mean "allowlist"?`},
		{"default policy typo", func(c *Config) { c.DefaultPolicies = []string{"blocklst"} }, `default_policies: "blocklst" is not a bundled policy ([blocklist allowlist]); did you mean "blocklist"?`},
		{"bundled tool typo", func(c *Config) { c.BundledTools = []string{"shell", "vsf"} }, `bundled_tools: "vsf" is not a bundled tool plugin (shell, vfs, python, podman_shell); did you mean "vfs"?`},
		{"bundled tool unknown", func(c *Config) { c.BundledTools = []string{"mytools"} }, `[[plugins]] entry`},
		{"empty backend", func(c *Config) { c.Backend = "" }, "backend is empty"},
		{"limits", func(c *Config) { c.Limits.MaxOutputBytes = 0 }, "max_output_bytes"},
		{"tool timeout", func(c *Config) { c.ToolTimeouts["x"] = -time.Second }, "tool_timeouts.x"},
		{"policy name", func(c *Config) { c.Policies = []PolicyConfig{{Name: "nope"}} }, `"nope" is not a bundled policy`},
		{"default policy", func(c *Config) { c.DefaultPolicies = []string{"nope"} }, "default_policies"},
		{"allowlist without commands", func(c *Config) { c.DefaultPolicies = []string{"allowlist"} }, "needs its commands"},
		{"plugin path", func(c *Config) { c.Plugins = []PluginConfig{{Name: "p"}} }, "path is required"},
		{"sha", func(c *Config) { c.Plugins = []PluginConfig{{Path: "x", SHA256: "abc"}} }, "64 hex digits"},
		{"idle", func(c *Config) { c.SessionIdleTimeout = -1 }, "session_idle_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want ErrInvalid mentioning %q, got %v", tc.want, err)
			}
		})
	}
}

// Podman is the default backend: the host backend, which is no sandbox,
// runs only when a config names it.
func TestDefaultBackendIsPodman(t *testing.T) {
	if b := DefaultConfig().Backend; b != "podman" {
		t.Fatalf("the default backend is %q, want podman", b)
	}
	if f := DefaultConfig().Fallback; f != "" {
		t.Fatalf("the default fallback is %q, want none", f)
	}
}
