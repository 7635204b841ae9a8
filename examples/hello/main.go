// Command hello is the smallest useful wai tool plugin: one tool that
// greets someone by running echo in the session's workspace. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o hello.wasm ./examples/hello
//
// and grant it the shell: grants = ["shell"] under its [[plugins]] entry.
package main

import (
	"strings"

	"github.com/wai-dev/wai/pdk"
)

type params struct {
	Name  string `json:"name" jsonschema:"who to greet" maxLength:"80"`
	Shout bool   `json:"shout,omitempty" jsonschema:"greet in capitals"`
}

// result is the structured value: pdk.Returns makes its JSON Schema the
// tool's output schema, which MCP clients see as outputSchema.
type result struct {
	ExitCode int    `json:"exit_code"`
	Backend  string `json:"backend" jsonschema:"where echo ran: podman, host or mock"`
}

func init() {
	pdk.Declare("hello", "0.1.0", pdk.CapShell)
	pdk.Tool("hello", "Greets someone from inside the workspace.", func(c *pdk.Call, p params) (pdk.Result, error) {
		if strings.TrimSpace(p.Name) == "" {
			return pdk.Fail("name is empty: say who to greet"), nil
		}
		res, err := pdk.Shell.Exec(pdk.ExecRequest{Argv: []string{"echo", "hello,", p.Name}})
		if err != nil {
			return pdk.Result{}, err // keeps its kind: a policy's no stays a permission error
		}
		greeting := strings.TrimSpace(res.Stdout)
		if p.Shout {
			greeting = strings.ToUpper(greeting)
		}
		return pdk.OK(greeting, result{ExitCode: res.ExitCode, Backend: res.Backend}), nil
	}, pdk.Returns[result](), pdk.ReadOnly())
}

func main() {}
