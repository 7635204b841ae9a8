package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/mcpserver"
	"github.com/wai-dev/wai/internal/plugbuild"
	_ "github.com/wai-dev/wai/plugins/mock"
)

// The model calls shell_execute and a crashing policy refuses the command
// inside the shell plugin: the tool error must tell it the policy is
// broken and to tell the operator, not to try a different command (the
// refusal crossed the Wasm wire through the tool plugin on its way).
func TestBrokenPolicyHintThroughToolPlugin(t *testing.T) {
	cfg := hostConfig(t, testPlugin{"tools/shell", []string{"shell"}})
	cfg.Backend = "mock"
	// The compilation cache plugbuild warms: this kernel alone loads the
	// shell plugin, which the race detector makes slow to compile.
	cfg.StateDir = plugbuild.StateDir(t)
	policy := filepath.Join(t.TempDir(), "badpolicy.wasm")
	if err := os.WriteFile(policy, plugbuild.Build(t, "host/testdata/badpolicy"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Policies = []host.PolicyConfig{{Path: policy, Config: map[string]any{"mode": "panic"}}}
	cs := stdioClient(t, serve(t, startKernel(t, cfg), mcpserver.Options{}), nil)
	res := call(t, cs, "shell_execute", map[string]any{"command": []string{"true"}})
	msg := text(res)
	if !res.IsError || !strings.Contains(msg, "policy badpolicy") || !strings.Contains(msg, "tell the operator") || strings.Contains(msg, "different command") {
		t.Errorf("shell_execute under a crashing policy: %q; want an error naming badpolicy that says to tell the operator", msg)
	}
}
