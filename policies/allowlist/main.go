// Command allowlist is the bundled allowlist policy as a Wasm plugin: only
// commands whose base name is listed may run, including every command of
// a shell string and what wrappers (sudo, env, xargs, sh -c) run. The
// decisions are those of package rules, which the host also runs
// in-process for the bundled policy.
//
// Config key: commands (a list of base names). A config it cannot read
// denies every command, with the reason.
package main

import (
	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/policies/allowlist/rules"
	"github.com/wai-dev/wai/policies/internal/plugconf"
)

var (
	list    *rules.Allowlist
	loadErr error
)

func load() {
	c, err := rules.ParseConfig(plugconf.Object([]string{"commands"}, pdk.Config))
	if err == nil {
		list, err = rules.New(c)
	}
	loadErr = err
}

func check(req pdk.CheckRequest) pdk.Decision {
	if list == nil && loadErr == nil {
		load()
	}
	if loadErr != nil {
		return pdk.Deny("%v", loadErr)
	}
	ok, reason := list.Check(rules.Request{Action: req.Action, Command: req.Command, Shell: req.Shell, Script: req.Script, EnvKeys: req.EnvKeys})
	if ok {
		return pdk.Allow()
	}
	return pdk.Deny("%s", reason)
}

func init() {
	pdk.Declare("allowlist", "1.0.0")
	pdk.Policy(check, pdk.ActionShellExec, pdk.ActionShellScript)
}

func main() {}
