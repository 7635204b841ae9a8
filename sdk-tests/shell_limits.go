package sdktests

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// manyEnv returns n valid variables.
func manyEnv(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[fmt.Sprintf("WAI_SDK_V%d", i)] = "x"
	}
	return m
}

// rejectedBeforeRunning sends a request built to create the marker file and
// checks that it is refused with ErrInvalid and that the marker does not
// exist afterwards: the limit was checked before anything ran.
func rejectedBeforeRunning(t *T, w *ws, name string, call func(ctx context.Context) error) {
	t.Helper()
	err := call(t.Context())
	wantKind(t, name, err, backend.ErrInvalid)
	if w.b.Caps.RealProcesses && w.exists("limit-marker") {
		t.Errorf("%s: the request was refused only after it ran (the marker file exists)", name)
		if _, err := w.FS().Remove(t.Context(), backend.RemoveRequest{Path: w.p("limit-marker")}); err != nil {
			t.Fatalf("removing the marker: %v", err)
		}
	}
}

func checkLimitsRejected(t *T, w *ws) {
	l := w.limits
	marker := w.p("limit-marker")
	touch := []string{"touch", marker}
	touchSh := "touch " + marker
	cases := []struct {
		name string
		req  backend.ExecRequest
	}{
		{"shell string over the command limit", backend.ExecRequest{Shell: touchSh + "; : " + strings.Repeat("x", l.MaxCommandBytes)}},
		{"argv over the command limit", backend.ExecRequest{Argv: append(touch[:2:2], strings.Repeat("x", l.MaxCommandBytes))}},
		{"stdin over the limit", backend.ExecRequest{Shell: touchSh, Stdin: strings.Repeat("x", l.MaxStdinBytes+1)}},
		{"too many env vars", backend.ExecRequest{Shell: touchSh, Env: manyEnv(l.MaxEnvVars + 1)}},
		{"env name starting with a digit", backend.ExecRequest{Shell: touchSh, Env: map[string]string{"1BAD": "x"}}},
		{"env name with a dash", backend.ExecRequest{Shell: touchSh, Env: map[string]string{"A-B": "x"}}},
		{"env name with =", backend.ExecRequest{Shell: touchSh, Env: map[string]string{"A=B": "x"}}},
		{"empty env name", backend.ExecRequest{Shell: touchSh, Env: map[string]string{"": "x"}}},
		{"non-ASCII env value", backend.ExecRequest{Shell: touchSh, Env: map[string]string{"X": "é"}}},
		{"env value with NUL", backend.ExecRequest{Shell: touchSh, Env: map[string]string{"X": "a\x00b"}}},
		{"non-ASCII env name", backend.ExecRequest{Shell: touchSh, Env: map[string]string{"É": "x"}}},
		{"timeout below the minimum", backend.ExecRequest{Shell: touchSh, Timeout: l.MinTimeout / 2}},
		{"negative timeout", backend.ExecRequest{Shell: touchSh, Timeout: -time.Second}},
		{"timeout above the maximum", backend.ExecRequest{Shell: touchSh, Timeout: l.MaxTimeout + time.Second}},
		{"neither argv nor shell string", backend.ExecRequest{}},
		{"empty argv slice", backend.ExecRequest{Argv: []string{}}},
		{"empty program name", backend.ExecRequest{Argv: []string{"", marker}}},
		{"both argv and shell string", backend.ExecRequest{Argv: touch, Shell: touchSh}},
		{"unknown env mode", backend.ExecRequest{Shell: touchSh, EnvMode: "merge"}},
		{"NUL in argv", backend.ExecRequest{Argv: []string{"touch", marker, "a\x00b"}}},
		{"NUL in the shell string", backend.ExecRequest{Shell: touchSh + "\x00"}},
		{"NUL in cwd", backend.ExecRequest{Shell: touchSh, Cwd: w.p("") + "\x00x"}},
	}
	for _, c := range cases {
		// Commands run at the root, where the marker's path starts.
		req := c.req
		rejectedBeforeRunning(t, w, "Execute: "+c.name, func(ctx context.Context) error {
			_, err := w.Shell().Execute(ctx, req)
			return err
		})
	}
	checkLimitBoundaries(t, w, marker)
}

// checkLimitBoundaries sends requests exactly at each limit: they run.
func checkLimitBoundaries(t *T, w *ws, marker string) {
	l := w.limits
	prefix := "touch " + marker + "; : "
	exact := []struct {
		name string
		req  backend.ExecRequest
	}{
		{"shell string at the command limit", backend.ExecRequest{Shell: prefix + strings.Repeat("x", l.MaxCommandBytes-len(prefix))}},
		{"argv at the command limit", backend.ExecRequest{Argv: []string{"touch", marker, strings.Repeat("x", l.MaxCommandBytes-len("touch  ")-len(marker))}}},
		{"stdin at the limit", backend.ExecRequest{Argv: []string{"touch", marker}, Stdin: strings.Repeat("x", l.MaxStdinBytes)}},
		{"env vars at the limit", backend.ExecRequest{Argv: []string{"touch", marker}, Env: manyEnv(l.MaxEnvVars)}},
		{"timeout at the minimum", backend.ExecRequest{Argv: []string{"true"}, Timeout: l.MinTimeout}},
		{"timeout at the maximum", backend.ExecRequest{Argv: []string{"touch", marker}, Timeout: l.MaxTimeout}},
	}
	for _, c := range exact {
		if _, err := w.Shell().Execute(t.Context(), c.req); err != nil {
			t.Errorf("Execute: %s: refused (%v), want it to run", c.name, err)
		}
	}
	if w.b.Caps.RealProcesses && !w.exists("limit-marker") {
		t.Errorf("the requests at the limits did not run: the marker file was never created")
	}
}

func checkScriptLimitsRejected(t *T, w *ws) {
	l := w.limits
	touch := "touch " + w.p("limit-marker") + "\n"
	cases := []struct {
		name string
		req  backend.ScriptRequest
	}{
		{"script over the limit", backend.ScriptRequest{Script: touch + "# " + strings.Repeat("x", l.MaxScriptBytes)}},
		{"empty script", backend.ScriptRequest{}},
		{"NUL in the script", backend.ScriptRequest{Script: touch + "\x00"}},
		{"newline in the interpreter", backend.ScriptRequest{Script: touch, Interpreter: "/bin/sh\n-x"}},
		{"NUL in the interpreter", backend.ScriptRequest{Script: touch, Interpreter: "/bin/sh\x00"}},
		{"too many env vars", backend.ScriptRequest{Script: touch, Env: manyEnv(l.MaxEnvVars + 1)}},
		{"bad env name", backend.ScriptRequest{Script: touch, Env: map[string]string{"1BAD": "x"}}},
		{"non-ASCII env value", backend.ScriptRequest{Script: touch, Env: map[string]string{"X": "é"}}},
		{"unknown env mode", backend.ScriptRequest{Script: touch, EnvMode: "merge"}},
		{"timeout below the minimum", backend.ScriptRequest{Script: touch, Timeout: l.MinTimeout / 2}},
		{"timeout above the maximum", backend.ScriptRequest{Script: touch, Timeout: l.MaxTimeout + time.Second}},
		{"NUL in cwd", backend.ScriptRequest{Script: touch, Cwd: "a\x00b"}},
	}
	for _, c := range cases {
		rejectedBeforeRunning(t, w, "ExecuteScript: "+c.name, func(ctx context.Context) error {
			_, err := w.Shell().ExecuteScript(ctx, c.req)
			return err
		})
	}
	if _, err := w.Shell().ExecuteScript(t.Context(), backend.ScriptRequest{Script: touch + "# " + strings.Repeat("x", l.MaxScriptBytes-len(touch)-2)}); err != nil {
		t.Errorf("ExecuteScript: script at the limit refused: %v", err)
	}
	if w.b.Caps.RealProcesses && !w.exists("limit-marker") {
		t.Errorf("the script at the limit did not run: the marker file was never created")
	}
}
