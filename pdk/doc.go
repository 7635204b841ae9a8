// Package pdk is the Go plugin development kit of wai: it turns a Go main
// package into a wai tool plugin or policy plugin (a WebAssembly module
// speaking the ABI of docs/ABI.md), built with the standard toolchain:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o greet.wasm ./greet
//
// A tool plugin declares itself and its tools from init. Each tool's input
// schema is derived from its params struct (see Schema), and its params
// arrive decoded into it; Returns names the type of its result values,
// whose schema (see OutputSchema) becomes the tool's output schema:
//
//	package main
//
//	import (
//		"strings"
//
//		"github.com/wai-dev/wai/pdk"
//	)
//
//	type params struct {
//		Name string `json:"name" jsonschema:"who to greet"`
//	}
//
//	type result struct {
//		ExitCode int `json:"exit_code"`
//	}
//
//	func init() {
//		pdk.Declare("greet", "1.0.0", pdk.CapShell)
//		pdk.Tool("greet", "Greets someone.", func(c *pdk.Call, p params) (pdk.Result, error) {
//			res, err := pdk.Shell.Exec(pdk.ExecRequest{Argv: []string{"echo", "hello,", p.Name}})
//			if err != nil {
//				return pdk.Result{}, err // keeps its kind: a policy's refusal stays ErrPermission
//			}
//			return pdk.OK(strings.TrimSpace(res.Stdout), result{ExitCode: res.ExitCode}), nil
//		}, pdk.Returns[result]())
//	}
//
//	func main() {}
//
// The plugin is granted the shell in wai.toml (grants = ["shell"] under its
// [[plugins]] entry); examples/hello is this plugin, tested end to end.
//
// Tools reach the session's workspace through Shell, FS and Lifecycle,
// whose types mirror the host's (host/backend), and write to the host's
// log with Log. Errors from them are *Error values with a Kind, matched
// with errors.Is against ErrInvalid, ErrPermission, ErrUnavailable,
// ErrNotFound, ErrExist. A refusal by a policy that is broken (it crashed,
// ran out of time, answered nonsense) also carries Code CodePolicyFailed
// and matches ErrPolicyFailed: no other command will pass it. A tool
// answers a Result — OK(message, value), or Fail(...) when the model
// should read why it failed — or an error, whose kind and code reach the
// kernel when the tool returns the error it got or wraps it with %w (not
// when it flattens it into a new message with %v).
//
// A policy plugin registers a check function instead of tools. Commands
// given as a shell string (podman_shell, `wai exec -c`, ["sh","-c",…] from
// shell_execute) arrive as Command ["/bin/sh","-c",STRING] with STRING in
// Shell: a policy that looks only at Command[0] sees the shell and lets
// whatever the string runs through. Package
// github.com/wai-dev/wai/policies/shellcmd reads the string as the shell
// would, and says when it cannot tell (a name in a variable, a script file,
// a PATH the request or the command changes: pass EnvKeys too):
//
//	func init() {
//		pdk.Declare("no-curl", "1.0.0")
//		pdk.Policy(func(r pdk.CheckRequest) pdk.Decision {
//			runs, why := shellcmd.Of(r.Command, r.Shell, r.EnvKeys...).Runs("curl")
//			switch {
//			case runs:
//				return pdk.Deny("curl is not allowed here")
//			case why != "":
//				return pdk.Deny("cannot tell whether this runs curl: %s", why)
//			}
//			return pdk.Allow()
//		}, pdk.ActionShellExec)
//	}
//
// This is a seatbelt, not a wall: it judges the base name, so `cp
// /usr/bin/curl c; ./c` runs curl past it, and so does python3 -c, which
// can fetch a URL itself. A policy sees command lines, never what they
// run out of sight: the code an interpreter reads (python3, node, awk,
// sed's e, make's recipes; evaluate_python sends its code on stdin, so
// allowing python3 allows any code), the programs a configuration file
// names (allowing git lets the repository's .git/config aliases, hooks
// and core.fsmonitor run programs), and a copied or renamed program. To
// restrict an agent, allow a list of names that holds no interpreter or
// shell and refuse paths outside the system bin directories, as the
// bundled allowlist (policies/allowlist) does; refuse whatever shellcmd
// reports in Unjudgeable.
//
// The linker keeps only the host-function imports a plugin uses, so a
// plugin that never touches the filesystem needs no filesystem grant.
//
// Outside Wasm the package compiles too (its own tests run on the host);
// host functions then answer "unavailable".
package pdk
