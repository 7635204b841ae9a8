package main

import (
	"fmt"

	"github.com/wai-dev/wai/pdk"
)

// fail_code answers a tool error with an ABI error code (docs/ABI.md §5),
// wrapped with %w as a tool passing on a host function's refusal does:
// the plugin-side half of "an error's code survives a tool".
func init() {
	pdk.Tool("fail_code", "a tool error of a given kind and code, wrapped", func(c *pdk.Call, p struct {
		Kind string `json:"kind"`
		Code string `json:"code"`
	}) (pdk.Result, error) {
		err := &pdk.Error{Kind: pdk.Kind(p.Kind), Code: pdk.Code(p.Code), Message: "failing with code " + p.Code}
		return pdk.Result{}, fmt.Errorf("passing on: %w", err)
	})
}
