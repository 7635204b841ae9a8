// Command badpolicy is a test policy plugin that misbehaves as its config
// says (mode = "loop" | "panic" | "allow"), to prove the kernel's chain
// fails closed whatever a policy does.
package main

import (
	"github.com/wai-dev/wai/pdk"
)

var sink int

func check(req pdk.CheckRequest) pdk.Decision {
	mode, _ := pdk.Config("mode")
	switch mode {
	case "loop":
		for i := 0; ; i++ {
			sink += i
		}
	case "panic":
		var m map[string]int
		m["boom"] = 1
	case "allow":
		return pdk.Allow()
	}
	return pdk.Deny("mode %q", mode)
}

func init() {
	pdk.Declare("badpolicy", "1.0.0")
	pdk.Policy(check)
}

func main() {}
