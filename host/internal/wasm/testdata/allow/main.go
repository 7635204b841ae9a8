// Command allow is a minimal pdk policy (it denies rm, allows the rest),
// for the benchmarks of a policy check through the runtime.
package main

import "github.com/wai-dev/wai/pdk"

func init() {
	pdk.Declare("allow", "1.0.0")
	pdk.Policy(func(r pdk.CheckRequest) pdk.Decision {
		if len(r.Command) > 0 && r.Command[0] == "rm" {
			return pdk.Deny("rm is not allowed")
		}
		return pdk.Allow()
	}, pdk.ActionShellExec)
}

func main() {}
