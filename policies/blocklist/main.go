// Command blocklist is the bundled blocklist policy as a Wasm plugin: the
// default blocked patterns (docs/ARCHITECTURE.md), the command length limit, and structural rules
// that recognise destructive commands however they are spelled. The
// decisions are those of package rules, which the host also runs
// in-process for the bundled policy; this build is what a [[policies]]
// entry with a path loads, and the reference for writing policy plugins.
//
// Config keys (all optional): patterns, extra_patterns, max_command_bytes,
// disable_rules. A config it cannot read denies every command, with the
// reason: a broken guard must not open the door.
package main

import (
	"sync"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/policies/blocklist/rules"
	"github.com/wai-dev/wai/policies/internal/plugconf"
)

// loadRules builds the rules from the config on the first check, once;
// a config it cannot read is an error every check denies with.
var loadRules = sync.OnceValues(func() (*rules.Blocklist, error) {
	return plugconf.Rules([]string{"patterns", "extra_patterns", "max_command_bytes", "disable_rules"}, pdk.Config, rules.ParseConfig, rules.New)
})

func check(req pdk.CheckRequest) pdk.Decision {
	list, err := loadRules()
	if err != nil {
		return pdk.Deny("%v", err)
	}
	ok, reason := list.Check(rules.Request{Action: req.Action, Command: req.Command, Shell: req.Shell, Script: req.Script})
	if ok {
		return pdk.Allow()
	}
	return pdk.Deny("%s", reason)
}

func init() {
	pdk.Declare("blocklist", "1.0.0")
	pdk.Policy(check, pdk.ActionShellExec, pdk.ActionShellScript)
}

func main() {}
