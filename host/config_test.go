package host

import (
	"context"
	"errors"
	"reflect"
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
		{"default policy typo", func(c *Config) { c.DefaultPolicies = []string{"blocklst"} }, `default_policies: "blocklst" is not a bundled policy ([blocklist allowlist container_safety]); did you mean "blocklist"?`},
		{"bundled tool typo", func(c *Config) { c.BundledTools = []string{"shell", "vsf"} }, `bundled_tools: "vsf" is not a bundled tool plugin (shell, vfs, python, podman_shell, jobs, containers); did you mean "vfs"?`},
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

// The kernel keeps its own configuration: neither the Config handed to New
// nor the copies Kernel.Config returns share a map or slice with it, so no
// caller can write to what the kernel reads concurrently.
func TestKernelConfigIsACopy(t *testing.T) {
	cfg := DefaultConfig()
	cfg.StateDir = t.TempDir()
	cfg.BundledTools = nil
	cfg.Backends = map[string]map[string]any{"mock": {"env": map[string]any{"A": "1"}, "list": []any{"x"}}}
	cfg.Policies = []PolicyConfig{{Name: "allowlist", Config: map[string]any{"commands": []any{"ls"}}}}
	ctx := context.Background()
	k, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(ctx)

	cfg.ToolTimeouts["default"] = time.Nanosecond
	cfg.Backends["mock"]["env"].(map[string]any)["A"] = "2"
	cfg.Policies[0].Config["commands"].([]any)[0] = "rm"
	got := k.Config()
	got.ToolTimeouts["default"] = time.Hour
	got.Backends["mock"]["list"].([]any)[0] = "y"
	got.DefaultPolicies[0] = "nope"

	again := k.Config()
	if d := k.cfg.ToolTimeout("default"); d != DefaultToolTimeout {
		t.Errorf("the kernel's default tool timeout is %s, want %s", d, DefaultToolTimeout)
	}
	mock := again.Backends["mock"]
	if mock["env"].(map[string]any)["A"] != "1" || mock["list"].([]any)[0] != "x" {
		t.Errorf("the kernel's [backends.mock] changed: %v", mock)
	}
	if c := again.Policies[0].Config["commands"].([]any)[0]; c != "ls" {
		t.Errorf("the kernel's allowlist changed: %v", c)
	}
	if !reflect.DeepEqual(again.DefaultPolicies, DefaultConfig().DefaultPolicies) {
		t.Errorf("the kernel's default_policies changed: %v", again.DefaultPolicies)
	}
}
