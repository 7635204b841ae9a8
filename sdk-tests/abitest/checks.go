package abitest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// compareExec runs req directly and through the plugin and compares the
// results field by field (durations aside).
func (c *check) compareExec(req backend.ExecRequest) {
	c.t.Helper()
	direct, err := c.ws.Shell().Execute(c.ctx(), req)
	if err != nil {
		c.t.Fatalf("backend exec %s: %v", mustJSON(execParams(req)), err)
	}
	c.same("exec "+mustJSON(execParams(req)), c.value("exec", execParams(req)), execJSON(direct), "duration_ms")
}

func checkExec(t *testing.T, c *check) {
	c.compareExec(backend.ExecRequest{Argv: []string{"echo", "hello", "wörld"}})
	c.compareExec(backend.ExecRequest{Shell: "echo $((6*7)); echo err >&2; exit 3"})
	c.compareExec(backend.ExecRequest{Argv: []string{"true"}, DiscardOutput: true})
	c.compareExec(backend.ExecRequest{Argv: []string{"env"}, Env: map[string]string{"ABITEST": "1"}, EnvMode: backend.EnvReplace})
}

func checkExecProcesses(t *testing.T, c *check) {
	c.compareExec(backend.ExecRequest{Argv: []string{"cat"}, Stdin: "piped through\nstdin\n"})
	c.compareExec(backend.ExecRequest{Shell: `printf '%s' "$ABITEST"`, Env: map[string]string{"ABITEST": "env value"}})
	if _, err := c.ws.FS().Write(c.ctx(), backend.WriteRequest{Path: "sub/.keep", Mode: backend.WriteOverwrite}); err != nil {
		t.Fatal(err)
	}
	c.compareExec(backend.ExecRequest{Argv: []string{"pwd"}, Cwd: "sub"})
	// A timeout is a result: exit 124, timed_out and the signal, through
	// the plugin too.
	timeout := backend.ExecRequest{Argv: []string{"sleep", "5"}, Timeout: 300 * time.Millisecond}
	v := c.value("exec", execParams(timeout))
	if m, _ := v.(map[string]any); m["timed_out"] != true || m["exit_code"] != float64(backend.TimeoutExitCode) {
		t.Errorf("sleep 5 with a 300ms timeout: %s, want timed_out and exit 124", mustJSON(v))
	}
	c.compareExec(timeout)
	// Output over the limit comes back truncated, marker and all.
	c.compareExec(backend.ExecRequest{Shell: "head -c 100000 /dev/zero | tr '\\0' a"})
}

func checkExecErrors(t *testing.T, c *check) {
	for _, req := range []backend.ExecRequest{
		{},
		{Argv: []string{"echo"}, Shell: "echo"},
		{Argv: []string{"echo"}, Timeout: time.Millisecond},
		{Argv: []string{"echo"}, Env: map[string]string{"BAD NAME": "x"}},
		{Argv: []string{"echo"}, EnvMode: "merge"},
		{Argv: []string{"echo", strings.Repeat("x", 5000)}},
	} {
		_, direct := c.ws.Shell().Execute(c.ctx(), req)
		_, plugin := c.call("exec", execParams(req))
		c.sameKind("exec "+mustJSON(execParams(req)), plugin, direct)
	}
}

func checkScript(t *testing.T, c *check) {
	req := backend.ScriptRequest{Script: "echo scripted\necho $0 >/dev/null\n"}
	direct, err := c.ws.Shell().ExecuteScript(c.ctx(), req)
	if err != nil {
		t.Fatalf("backend script: %v", err)
	}
	v := c.value("script", map[string]any{"script": req.Script})
	// The script runs from a temporary file whose name may differ between
	// two runs: compare everything but the command line.
	c.same("script", v, execJSON(direct), "duration_ms", "command")
	_, directErr := c.ws.Shell().ExecuteScript(c.ctx(), backend.ScriptRequest{})
	_, pluginErr := c.call("script", map[string]any{"script": ""})
	c.sameKind("empty script", pluginErr, directErr)
}

func checkWhichEnvInfo(t *testing.T, c *check) {
	for _, cmd := range []string{"sh", "abitest-no-such-command"} {
		w, err := c.ws.Shell().Which(c.ctx(), cmd)
		if err != nil {
			t.Fatalf("backend which %s: %v", cmd, err)
		}
		c.same("which "+cmd, c.value("which", map[string]any{"command": cmd}),
			map[string]any{"command": w.Command, "path": w.Path, "found": w.Found()})
	}
	env, err := c.ws.Shell().Env(c.ctx())
	if err != nil {
		t.Fatalf("backend env: %v", err)
	}
	vars := []map[string]string{}
	for _, v := range env.Vars {
		vars = append(vars, map[string]string{"name": v.Name, "value": v.Value})
	}
	c.same("env", c.value("env", map[string]any{}), map[string]any{"vars": vars, "cwd": env.Cwd, "shell": env.Shell})
	i, err := c.ws.Shell().Info(c.ctx())
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	c.same("info", c.value("info", map[string]any{}), map[string]any{"backend": i.Backend, "sandboxed": i.Sandboxed,
		"network_enabled": i.NetworkEnabled, "default_timeout_ms": ms(i.DefaultTimeout)})
	// The limits a plugin is told are the ones the workspace was opened
	// with, which its commands are held to.
	l := c.limits
	c.same("limits", c.value("limits", map[string]any{}), map[string]any{"default_timeout_ms": ms(l.DefaultTimeout),
		"min_timeout_ms": ms(l.MinTimeout), "max_timeout_ms": ms(l.MaxTimeout), "max_output_bytes": l.MaxOutputBytes,
		"max_command_bytes": l.MaxCommandBytes, "max_stdin_bytes": l.MaxStdinBytes})
}

// seed writes a small tree directly through the backend.
func (c *check) seed() {
	c.t.Helper()
	for p, content := range map[string]string{
		"a.txt":          "alpha\nbeta\ngamma\n",
		"dir/b.txt":      "beta in b\n",
		"dir/c.go":       "package c // beta\n",
		"dir/deep/d.txt": "delta\n",
		"unicode.txt":    "añb — 日本語\nzwei\n",
	} {
		if _, err := c.ws.FS().Write(c.ctx(), backend.WriteRequest{Path: p, Content: content, Mode: backend.WriteOverwrite}); err != nil {
			c.t.Fatalf("seeding %s: %v", p, err)
		}
	}
}

func checkFSReads(t *testing.T, c *check) {
	c.seed()
	fs := c.ws.FS()
	for _, p := range []string{"a.txt", "dir", ".", "unicode.txt"} {
		fi, err := fs.Stat(c.ctx(), p)
		if err != nil {
			t.Fatal(err)
		}
		c.same("stat "+p, c.value("stat", map[string]any{"path": p}), fileJSON(fi))
	}
	for _, p := range []string{".", "dir"} {
		l, err := fs.List(c.ctx(), p)
		if err != nil {
			t.Fatal(err)
		}
		entries := []map[string]any{}
		for _, e := range l.Entries {
			entries = append(entries, fileJSON(e))
		}
		c.same("list "+p, c.value("list", map[string]any{"path": p}), map[string]any{"entries": entries, "truncated": l.Truncated})
	}
	for _, r := range []backend.ReadRequest{{Path: "a.txt"}, {Path: "a.txt", Offset: 1, Limit: 1}, {Path: "unicode.txt"}} {
		res, err := fs.Read(c.ctx(), r)
		if err != nil {
			t.Fatal(err)
		}
		c.same("read "+mustJSON(r), c.value("read", map[string]any{"path": r.Path, "offset": r.Offset, "limit": r.Limit}),
			map[string]any{"path": res.Path, "offset": res.Offset, "lines": nonNil(res.Lines), "total_lines": res.TotalLines, "truncated": res.Truncated})
	}
	for _, g := range []backend.GlobRequest{{Pattern: "**/*.txt"}, {Pattern: "*.go", Path: "dir"}, {Pattern: "nothing*"}} {
		res, err := fs.Glob(c.ctx(), g)
		if err != nil {
			t.Fatal(err)
		}
		c.same("glob "+mustJSON(g), c.value("glob", map[string]any{"pattern": g.Pattern, "path": g.Path}),
			map[string]any{"paths": nonNil(res.Paths), "truncated": res.Truncated})
	}
	for _, g := range []backend.GrepRequest{{Pattern: "beta"}, {Pattern: "^b", Path: "dir", Glob: "*.txt"}, {Pattern: "日本"}} {
		res, err := fs.Grep(c.ctx(), g)
		if err != nil {
			t.Fatal(err)
		}
		matches := []map[string]any{}
		for _, m := range res.Matches {
			matches = append(matches, map[string]any{"path": m.Path, "line": m.Line, "text": m.Text})
		}
		c.same("grep "+mustJSON(g), c.value("grep", map[string]any{"pattern": g.Pattern, "path": g.Path, "glob": g.Glob}),
			map[string]any{"matches": matches, "truncated": res.Truncated})
	}
}

func checkFSWrites(t *testing.T, c *check) {
	fs := c.ws.FS()
	// Written by the plugin, read by the backend: byte for byte.
	const lines = 1500 // under the 2,000-line read cap; 22,500 characters, ~31 KB
	big := strings.Repeat("ünïcödé line ✓\n", lines)
	v := c.value("write", map[string]any{"path": "new/big.txt", "content": big})
	c.same("write", v, map[string]any{"path": "new/big.txt", "bytes": len(big), "created": true})
	got, err := fs.Read(c.ctx(), backend.ReadRequest{Path: "new/big.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Lines, "\n")+"\n" != big {
		t.Errorf("content written through the plugin reads back differently (%d lines)", len(got.Lines))
	}
	c.value("write", map[string]any{"path": "new/big.txt", "content": "tail\n", "mode": "append"})
	if fi, err := fs.Stat(c.ctx(), "new/big.txt"); err != nil || fi.Size != int64(len(big)+5) {
		t.Errorf("after append: %+v, %v; want %d bytes", fi, err, len(big)+5)
	}
	// Edited by the plugin.
	c.same("edit", c.value("edit", map[string]any{"path": "new/big.txt", "old": "tail", "new": "end"}),
		map[string]any{"path": "new/big.txt", "replacements": 1})
	c.same("edit all", c.value("edit", map[string]any{"path": "new/big.txt", "old": "✓", "new": "v", "replace_all": true}),
		map[string]any{"path": "new/big.txt", "replacements": lines})
	got, err = fs.Read(c.ctx(), backend.ReadRequest{Path: "new/big.txt", Offset: lines - 1})
	if err != nil || strings.Join(got.Lines, "|") != "ünïcödé line v|end" {
		t.Errorf("after the edits the tail reads %q, %v", got.Lines, err)
	}
	// Removed by the plugin.
	c.same("remove", c.value("remove", map[string]any{"path": "new", "recursive": true}), map[string]any{"removed": 2})
	if _, err := fs.Stat(c.ctx(), "new"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("after remove, stat new: %v, want not found", err)
	}
}

func checkFSErrors(t *testing.T, c *check) {
	c.seed()
	fs := c.ws.FS()
	_, d := fs.Stat(c.ctx(), "missing.txt")
	_, p := c.call("stat", map[string]any{"path": "missing.txt"})
	c.sameKind("stat missing", p, d)
	_, d = fs.Write(c.ctx(), backend.WriteRequest{Path: "a.txt", Content: "x"})
	_, p = c.call("write", map[string]any{"path": "a.txt", "content": "x"})
	c.sameKind("create existing", p, d)
	_, d = fs.Edit(c.ctx(), backend.EditRequest{Path: "a.txt", Old: "no such text", New: "x"})
	_, p = c.call("edit", map[string]any{"path": "a.txt", "old": "no such text", "new": "x"})
	c.sameKind("edit without a match", p, d)
	_, d = fs.Grep(c.ctx(), backend.GrepRequest{Pattern: "(unclosed"})
	_, p = c.call("grep", map[string]any{"pattern": "(unclosed"})
	c.sameKind("grep bad pattern", p, d)
	_, d = fs.Read(c.ctx(), backend.ReadRequest{Path: "../outside"})
	_, p = c.call("read", map[string]any{"path": "../outside"})
	c.sameKind("read outside the workspace", p, d)
	_, d = fs.Remove(c.ctx(), backend.RemoveRequest{Path: "dir"})
	_, p = c.call("remove", map[string]any{"path": "dir"})
	c.sameKind("remove a non-empty directory", p, d)
	_, d = fs.List(c.ctx(), "a.txt")
	_, p = c.call("list", map[string]any{"path": "a.txt"})
	c.sameKind("list a file", p, d)
}

func checkPluginKinds(t *testing.T, c *check) {
	c.seed()
	v := c.value("kinds", map[string]any{"existing": "a.txt", "missing": "missing.txt"})
	want := map[string]any{
		"stat_missing":    map[string]any{"kind": "not_found", "matched": []any{"not_found"}, "typed": true, "nil": false},
		"create_existing": map[string]any{"kind": "exists", "matched": []any{"exists"}, "typed": true, "nil": false},
		"exec_empty":      map[string]any{"kind": "invalid", "matched": []any{"invalid"}, "typed": true, "nil": false},
	}
	c.same("errors as the pdk sees them", v, want)
}

func checkToolErrors(t *testing.T, c *check) {
	for kind, want := range map[string]error{
		"invalid": backend.ErrInvalid, "permission": backend.ErrPermission, "unavailable": backend.ErrUnavailable,
		"not_found": backend.ErrNotFound, "exists": backend.ErrExist, "internal": nil,
	} {
		_, err := c.call("fail", map[string]any{"kind": kind})
		switch {
		case err == nil:
			t.Errorf("tool error %s: the call succeeded", kind)
		case backend.KindOf(err) != want:
			t.Errorf("tool error %s reached the caller as %s (%v)", kind, errKind(err), err)
		case !strings.Contains(err.Error(), "failing with kind "+kind):
			t.Errorf("tool error %s lost its message: %v", kind, err)
		}
	}
}

func checkLifecycle(t *testing.T, c *check) {
	lc, ok := c.ws.(backend.Lifecycle)
	if !ok {
		_, err := c.call("lifecycle", map[string]any{"op": "state"})
		if !errors.Is(err, backend.ErrUnavailable) {
			t.Errorf("lifecycle on a workspace without one: %v, want unavailable", err)
		}
		return
	}
	if _, err := lc.Start(c.ctx()); err != nil {
		t.Fatalf("backend start: %v", err)
	}
	st, err := lc.State(c.ctx())
	if err != nil {
		t.Fatal(err)
	}
	v := c.value("lifecycle", map[string]any{"op": "state"})
	m, _ := v.(map[string]any)
	if m["name"] != st.Name || m["running"] != st.Running {
		t.Errorf("lifecycle state through the plugin %s, from the backend %+v", mustJSON(v), st)
	}
}

func checkLogAndCall(t *testing.T, c *check) {
	for _, level := range []string{"debug", "info", "warn", "error"} {
		c.value("log", map[string]any{"level": level, "message": "abitest says " + level})
	}
	v, _ := c.value("call", map[string]any{}).(map[string]any)
	if v["tool"] != "call" {
		t.Errorf("the plugin saw tool %v, want call", v["tool"])
	}
	if r, _ := v["remaining_ms"].(float64); r <= 0 {
		t.Errorf("the plugin saw %v ms remaining; want a positive time to its deadline", v["remaining_ms"])
	}
}
