// Command echo is a trivial pdk tool plugin: its one tool answers its
// params. The benchmarks measure a tool call end to end on it.
package main

import "github.com/wai-dev/wai/pdk"

type params struct {
	Name string `json:"name"`
}

func init() {
	pdk.Declare("echo", "1.0.0")
	pdk.Tool("echo", "Answers its params.", func(c *pdk.Call, p params) (pdk.Result, error) {
		return pdk.OK("echo", p), nil
	}, pdk.ReadOnly())
}

func main() {}
