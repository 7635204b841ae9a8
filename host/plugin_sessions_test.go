package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/config"
)

// TestPluginStateStaysInItsSession: a tool plugin that keeps what it was
// given in a Go global (host/internal/wasm/testdata/stateful) never hands
// one session's value to another session, nor to a later session of the
// same name once the first is closed.
func TestPluginStateStaysInItsSession(t *testing.T) {
	cfg := hostConfig() // not podman, the default: this is about plugin state
	cfg.Plugins = []host.PluginConfig{{Path: pluginFile(t, "host/internal/wasm/testdata/stateful"), Grants: []string{"shell"}}}
	// wai_describe runs under policy_timeout; a Go guest's first call
	// starts its runtime, which under -race on a busy machine can take
	// longer than the default second. This test is about state, not speed.
	cfg.PolicyTimeout = 30 * time.Second
	ctx := context.Background()
	k := startKernel(t, cfg)
	remember := func(session, value string) string {
		t.Helper()
		res, err := k.Call(ctx, session, "remember", json.RawMessage(`{"value":"`+value+`"}`))
		if err != nil || !res.OK {
			t.Fatalf("remember in %s: %+v, %v", session, res, err)
		}
		// The host backend's unsandboxed note ends a command tool's text.
		msg, _, _ := strings.Cut(res.Message, "\n\n[wai: ")
		return msg
	}

	if prev := remember("alice", "alice-secret"); prev != "" {
		t.Fatalf("alice's first call saw %q", prev)
	}
	if prev := remember("bob", "bob-value"); prev != "" {
		t.Errorf("bob saw %q, left by alice's session", prev)
	}
	if prev := remember("alice", "alice-2"); prev != "alice-secret" {
		t.Errorf("alice's second call saw %q, want her own alice-secret", prev)
	}
	s, err := k.Session(ctx, "alice", host.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if prev := remember("alice", "alice-3"); prev != "" {
		t.Errorf("a new session named alice saw %q, left by the closed one", prev)
	}
}

// TestPluginLimitsConfig: the [limits] keys that bound plugin instances
// load, and bad values are refused naming the key.
func TestPluginLimitsConfig(t *testing.T) {
	cfg, err := config.Parse([]byte("[limits]\nsession_concurrent_calls = 3\nplugin_memory_budget = 268435456\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SessionConcurrentCalls != 3 || cfg.PluginMemoryBudget != 256<<20 {
		t.Errorf("loaded %d, %d; want 3, 256 MiB", cfg.SessionConcurrentCalls, cfg.PluginMemoryBudget)
	}
	def := host.DefaultConfig()
	if def.SessionConcurrentCalls != 8 || def.PluginMemoryBudget != 2<<30 {
		t.Errorf("defaults %d, %d; want 8, 2 GiB", def.SessionConcurrentCalls, def.PluginMemoryBudget)
	}
	for toml, key := range map[string]string{
		"[limits]\nsession_concurrent_calls = 0\n":    "limits.session_concurrent_calls",
		"[limits]\nsession_concurrent_calls = 5000\n": "limits.session_concurrent_calls",
		"[limits]\nplugin_memory_budget = 1048576\n":  "limits.plugin_memory_budget",
	} {
		_, err := config.Parse([]byte(toml))
		if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), key) {
			t.Errorf("%q: %v, want ErrInvalid naming %s", toml, err, key)
		}
	}
}
