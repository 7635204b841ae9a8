package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wai-dev/wai/internal/plugbuild"
)

// `wai call shell_execute` under a crashing policy: the refusal comes
// back through the shell plugin, and the hint must still send the person
// to the policy plugin, not to another command.
func TestBrokenPolicyHintThroughToolPlugin(t *testing.T) {
	t.Parallel()
	shell := writeFile(t, t.TempDir(), "shell.wasm", string(plugbuild.Build(t, "tools/shell")))
	policy := writeFile(t, t.TempDir(), "badpolicy.wasm", string(plugbuild.Build(t, "host/testdata/badpolicy")))
	e := newEnv(t, fmt.Sprintf("bundled_tools = []\n\n[[plugins]]\npath = %q\ngrants = [\"shell\"]\n\n"+
		"[[policies]]\npath = %q\nconfig = { mode = \"panic\" }\n", shell, policy))
	r := e.run("call", "--config", e.config, "--backend", "mock", "shell_execute", `{"command":["true"]}`)
	if r.code == 0 || !strings.Contains(r.stderr, "policy badpolicy") || !strings.Contains(r.stderr, "hint: the policy named is broken") ||
		strings.Contains(r.stderr, "change the command") {
		t.Errorf("want a refusal naming badpolicy whose hint says the policy is broken; got %v", r)
	}
}
