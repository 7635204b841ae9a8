// Command noop is a test tool plugin: "noop" answers at once without
// touching the host, so benchmarks measure the kernel and the runtime, and
// "run" runs a command, so tests can watch a plugin's shell use pass (or
// not) the kernel's guards.
package main

import (
	"github.com/wai-dev/wai/pdk"
)

type noParams struct{}

type runParams struct {
	Command []string `json:"command,omitempty" jsonschema:"argv to run"`
	Shell   string   `json:"shell,omitempty" jsonschema:"a shell string to run instead"`
}

func init() {
	pdk.Declare("noop", "1.0.0", pdk.CapShell)
	pdk.Tool("noop", "Does nothing.", func(c *pdk.Call, _ noParams) (pdk.Result, error) {
		return pdk.OK("done", nil), nil
	}, pdk.ReadOnly())
	pdk.Tool("run", "Runs a command in the workspace.", func(c *pdk.Call, p runParams) (pdk.Result, error) {
		req := pdk.ExecRequest{Argv: p.Command}
		if p.Shell != "" {
			req = pdk.ExecRequest{Shell: p.Shell}
		}
		res, err := pdk.Shell.Exec(req)
		if err != nil {
			return pdk.Result{}, err
		}
		return pdk.OK(res.Stdout, map[string]any{"exit_code": res.ExitCode, "sandboxed": res.Sandboxed, "backend": res.Backend}), nil
	})
}

func main() {}
