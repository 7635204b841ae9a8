// Package abitest is the conformance suite of the plugin ABI
// (docs/ABI.md): a test plugin built with the Go pdk exercises every host
// function, and the suite checks that what the plugin sees is exactly what
// the backend returns — every field, every error kind — through whichever
// ABI implementation is under test (the Wasm runtime directly, or the
// kernel) over whichever backend is handed in.
//
// An implementation runs it from its own tests:
//
//	abitest.Run(t, abitest.Harness{Backend: backendUnderTest, Load: loadWithMyRuntime})
//
// The plugin is built from ./plugin with internal/plugbuild (cached).
package abitest

import (
	"context"
	"encoding/json"

	"fmt"
	"reflect"

	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
	sdktests "github.com/wai-dev/wai/sdk-tests"
)

// Runner is the ABI implementation under test, holding the loaded test
// plugin. Call calls one of its tools with every capability use served by
// ws. Calls may run concurrently.
type Runner interface {
	Call(ctx context.Context, ws backend.Workspace, tool string, params json.RawMessage) (Result, error)
}

// Result is a tool's answer.
type Result struct {
	OK      bool
	Message string
	Value   json.RawMessage
}

// Harness names what the suite runs against.
type Harness struct {
	// Backend opens the workspaces capability uses go to.
	Backend sdktests.Backend
	// Load loads the test plugin (the module's bytes), granting it every
	// capability it declares: shell, fs.read, fs.write, lifecycle.
	Load func(t *testing.T, wasm []byte) Runner
}

// Plugin builds the test plugin and returns its bytes.
func Plugin(t testing.TB) []byte { return plugbuild.Build(t, "sdk-tests/abitest/plugin") }

// suite is one run: the runner, and a fresh workspace per check.
type suite struct {
	h Harness
	r Runner
}

// Run runs every check.
func Run(t *testing.T, h Harness) {
	s := &suite{h: h, r: h.Load(t, Plugin(t))}
	for _, c := range []struct {
		name  string
		procs bool // needs Caps.RealProcesses
		run   func(t *testing.T, c *check)
	}{
		{"ExecMatchesBackend", false, checkExec},
		{"ExecProcesses", true, checkExecProcesses},
		{"ExecErrorsKeepKind", false, checkExecErrors},
		{"Script", false, checkScript},
		{"WhichEnvInfo", false, checkWhichEnvInfo},
		{"FilesystemReads", false, checkFSReads},
		{"FilesystemWrites", false, checkFSWrites},
		{"FilesystemErrorsKeepKind", false, checkFSErrors},
		{"PluginSeesKinds", false, checkPluginKinds},
		{"ToolErrorsKeepKind", false, checkToolErrors},
		{"ToolErrorsKeepCode", false, checkToolErrorCodes},
		{"Lifecycle", false, checkLifecycle},
		{"LogAndCallContext", false, checkLogAndCall},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.procs && !h.Backend.Caps.RealProcesses {
				t.Skip("needs real processes: the backend declares Caps.RealProcesses=false")
			}
			limits := backend.DefaultLimits()
			ws := h.Backend.Open(t, limits)
			t.Cleanup(func() {
				if err := ws.Close(context.Background()); err != nil {
					t.Errorf("closing the workspace: %v", err)
				}
			})
			c.run(t, &check{s: s, ws: ws, t: t, limits: limits})
		})
	}
}

// check is one check's view: its workspace and helpers.
type check struct {
	s  *suite
	ws backend.Workspace
	t  *testing.T
	// limits are the ones ws was opened with.
	limits backend.Limits
}

func (c *check) ctx() context.Context { return c.t.Context() }

// call calls a tool of the test plugin.
func (c *check) call(tool string, params any) (Result, error) {
	b, err := json.Marshal(params)
	if err != nil {
		c.t.Fatalf("encoding params: %v", err)
	}
	ctx, cancel := context.WithTimeout(c.ctx(), 60*time.Second)
	defer cancel()
	return c.s.r.Call(ctx, c.ws, tool, b)
}

// value calls a tool that must succeed and decodes its value.
func (c *check) value(tool string, params any) any {
	c.t.Helper()
	res, err := c.call(tool, params)
	if err != nil {
		c.t.Fatalf("%s %s: %v", tool, mustJSON(params), err)
	}
	if !res.OK {
		c.t.Fatalf("%s %s: failed result %q", tool, mustJSON(params), res.Message)
	}
	var v any
	if err := json.Unmarshal(res.Value, &v); err != nil {
		c.t.Fatalf("%s: value %s is not JSON: %v", tool, res.Value, err)
	}
	return v
}

// same compares what the plugin saw with what the backend returned, both
// in the ABI's JSON shape; fields in ignore (timings) are left out.
func (c *check) same(what string, plugin, direct any, ignore ...string) {
	c.t.Helper()
	p, d := normalize(plugin, ignore), normalize(direct, ignore)
	if !reflect.DeepEqual(p, d) {
		c.t.Errorf("%s: the plugin saw\n  %s\nbut the backend returned\n  %s", what, mustJSON(p), mustJSON(d))
	}
}

// sameKind checks that an error reached the plugin's caller with the kind
// the backend gave it.
func (c *check) sameKind(what string, pluginErr, directErr error) {
	c.t.Helper()
	if directErr == nil {
		c.t.Fatalf("%s: the backend accepted the request; the check needs one it refuses", what)
	}
	if pluginErr == nil {
		c.t.Errorf("%s: the plugin's call succeeded; the backend said %v", what, directErr)
		return
	}
	if want, got := backend.KindOf(directErr), backend.KindOf(pluginErr); want != got {
		c.t.Errorf("%s: error kind %v through the plugin (%v), %v from the backend (%v)", what, got, pluginErr, want, directErr)
	}
}

// normalize round-trips v through JSON (so structs and maps compare alike)
// and drops the ignored top-level fields.
func normalize(v any, ignore []string) any {
	var out any
	if err := json.Unmarshal([]byte(mustJSON(v)), &out); err != nil {
		return fmt.Sprintf("unencodable: %v", err)
	}
	if m, ok := out.(map[string]any); ok {
		for _, k := range ignore {
			delete(m, k)
		}
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// The backend's types in the JSON shapes of docs/ABI.md, written here
// independently of the runtime's own encoding so the suite checks it.

func execJSON(r backend.ExecResult) map[string]any {
	cmd := r.Command
	if cmd == nil {
		cmd = []string{}
	}
	return map[string]any{"exit_code": r.ExitCode, "stdout": r.Stdout, "stderr": r.Stderr, "command": cmd, "cwd": r.Cwd,
		"duration_ms": r.Duration.Milliseconds(), "truncated": r.Truncated, "timed_out": r.TimedOut, "signal": r.Signal,
		"backend": r.Backend, "sandboxed": r.Sandboxed, "success": r.Success()}
}

func fileJSON(fi backend.FileInfo) map[string]any {
	m := map[string]any{"path": fi.Path, "name": fi.Name, "kind": string(fi.Kind), "size": fi.Size, "mode": uint32(fi.Mode.Perm())}
	if !fi.ModTime.IsZero() {
		m["mod_time"] = fi.ModTime.UTC().Format(time.RFC3339Nano)
	}
	return m
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

func execParams(r backend.ExecRequest) map[string]any {
	m := map[string]any{}
	if len(r.Argv) > 0 {
		m["argv"] = r.Argv
	}
	if r.Shell != "" {
		m["shell"] = r.Shell
	}
	if r.Cwd != "" {
		m["cwd"] = r.Cwd
	}
	if r.Env != nil {
		m["env"] = r.Env
	}
	if r.EnvMode != "" {
		m["env_mode"] = string(r.EnvMode)
	}
	if r.Stdin != "" {
		m["stdin"] = r.Stdin
	}
	if r.Timeout != 0 {
		m["timeout_ms"] = ms(r.Timeout)
	}
	if r.DiscardOutput {
		m["discard_output"] = true
	}
	return m
}

// errKind names an error's kind for messages.
func errKind(err error) string {
	if err == nil {
		return "none"
	}
	if k := backend.KindOf(err); k != nil {
		return k.Error()
	}
	return "internal"
}
