package host_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
	_ "github.com/wai-dev/wai/plugins/mock"
)

// A policy that crashes refuses the command a tool plugin (shell) runs
// for the model, and the refusal comes back through that plugin still
// matching ErrPolicyFailed: crossing the Wasm wire twice (host function
// to tool, tool to kernel) must not turn it into a plain deny, which
// would send the model trying other commands against a policy that
// refuses them all.
func TestBrokenPolicyRefusalThroughToolPlugin(t *testing.T) {
	cfg := hostConfig()
	cfg.Backend = "mock"
	// The compilation cache plugbuild warms without the race detector:
	// compiling the shell plugin under it takes minutes on a busy machine.
	cfg.StateDir = plugbuild.StateDir(t)
	cfg.Plugins = []host.PluginConfig{{Path: pluginFile(t, "tools/shell"), Grants: []string{"shell"}}}
	cfg.Policies = []host.PolicyConfig{{Path: pluginFile(t, "host/testdata/badpolicy"), Config: map[string]any{"mode": "panic"}}}
	k := startKernel(t, cfg)
	_, err := k.Call(t.Context(), "polfail", "shell_execute", json.RawMessage(`{"command":["true"]}`))
	if !errors.Is(err, backend.ErrPermission) || !errors.Is(err, host.ErrPolicyFailed) || !strings.Contains(err.Error(), "policy badpolicy") {
		t.Fatalf("shell_execute under a crashing policy: %v; want ErrPermission and ErrPolicyFailed naming badpolicy", err)
	}
}
