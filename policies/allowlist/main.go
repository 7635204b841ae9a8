// Command allowlist is the bundled allowlist policy as a Wasm plugin: only
// commands whose base name is listed may run, including every command of
// a shell string and what wrappers (sudo, env, xargs, sh -c) run. The
// decisions are those of package rules, which the host also runs
// in-process for the bundled policy.
//
// Config keys: commands (a list of base names); ask (default true): a
// command whose only fault is a name not on the list is put to a person
// (the kernel denies it where nobody can be asked). A config it cannot
// read denies every command, with the reason.
package main

import (
	"sync"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/policies/allowlist/rules"
	"github.com/wai-dev/wai/policies/internal/plugconf"
)

// loadRules builds the rules from the config on the first check, once;
// a config it cannot read is an error every check denies with.
var loadRules = sync.OnceValues(func() (*rules.Allowlist, error) {
	return plugconf.Rules([]string{"commands", "ask"}, pdk.Config, rules.ParseConfig, rules.New)
})

func check(req pdk.CheckRequest) pdk.Decision {
	list, err := loadRules()
	if err != nil {
		return pdk.Deny("%v", err)
	}
	v := list.Judge(rules.Request{Action: req.Action, Command: req.Command, Shell: req.Shell, Script: req.Script, EnvKeys: req.EnvKeys})
	switch {
	case v.Allow:
		return pdk.Allow()
	case v.Ask:
		// A person may approve a command that is only missing from
		// the list; where nobody can be asked, the kernel denies it.
		return pdk.Ask(rules.ConfigKey, "%s", v.Reason)
	}
	d := pdk.Deny("%s", v.Reason)
	d.ConfigKey = rules.ConfigKey
	return d
}

func init() {
	pdk.Declare("allowlist", "1.0.0")
	pdk.Policy(check, pdk.ActionShellExec, pdk.ActionShellScript)
}

func main() {}
