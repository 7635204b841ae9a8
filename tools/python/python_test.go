package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/tooltest"
)

// pyEnv is one backend's kernel with the python plugin, and the fake
// python that answers on the mock.
type pyEnv struct {
	*tooltest.Env
	py *fakePython
}

var sessions atomic.Int64

// session returns a fresh session name: each case gets its own workspace.
func (e pyEnv) session() string { return fmt.Sprintf("py-%d", sessions.Add(1)) }

// fake sets the mock's answer for code; real backends run the code.
func (e pyEnv) fake(code string, c canned) {
	if e.Mock != nil {
		e.py.set(code, c)
	}
}

func (e pyEnv) call(t *testing.T, session string, params map[string]any) (host.ToolResult, result, error) {
	t.Helper()
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.CallIn(t, session, "evaluate_python", string(b))
	var r result
	if err == nil && len(res.Value) > 0 {
		tooltest.Value(t, res, &r)
	}
	return res, r, err
}

// mustCall fails t unless the call answered (OK or not) with a value.
func (e pyEnv) mustCall(t *testing.T, session string, params map[string]any) (host.ToolResult, result) {
	t.Helper()
	res, r, err := e.call(t, session, params)
	if err != nil {
		t.Fatalf("evaluate_python %v: %v", params, err)
	}
	return res, r
}

func (e pyEnv) write(t *testing.T, session, path, content string) {
	t.Helper()
	s, err := e.Kernel.Session(t.Context(), session, host.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Read first: a file the mock's seeds made must be read before it is
	// overwritten (read_before_write).
	if _, err := s.FS().Read(t.Context(), backend.ReadRequest{Path: path}); err != nil && !errors.Is(err, backend.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := s.FS().Write(t.Context(), backend.WriteRequest{Path: path, Content: content, Mode: backend.WriteOverwrite}); err != nil {
		t.Fatal(err)
	}
}

// file returns a workspace file's text and whether it exists.
func (e pyEnv) file(t *testing.T, session, path string) (string, bool) {
	t.Helper()
	s, err := e.Kernel.Session(t.Context(), session, host.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.FS().Read(t.Context(), backend.ReadRequest{Path: path})
	if errors.Is(err, backend.ErrNotFound) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(r.Lines, "\n"), true
}

// runPython runs fn on every backend; seeds are files every mock
// workspace starts with.
func runPython(t *testing.T, seeds map[string]string, fn func(t *testing.T, e pyEnv)) {
	runPythonWith(t, seeds, nil, fn)
}

func runPythonWith(t *testing.T, seeds map[string]string, adjust func(*host.Config), fn func(t *testing.T, e pyEnv)) {
	py := &fakePython{t: t, answers: map[string]canned{}}
	tooltest.RunOn(t, backendsWithFake(t, py, seeds), []string{"tools/python"}, adjust, func(t *testing.T, e *tooltest.Env) {
		if e.Backend.Real && !hasPython(t, e) {
			if os.Getenv("CI") == "true" {
				t.Fatal("python3 is required on CI: evaluate_python runs it")
			}
			t.Skip("python3 is not on this machine's PATH")
		}
		fn(t, pyEnv{e, py})
	})
}

func TestValidation(t *testing.T) {
	runPython(t, map[string]string{"exists.txt": "here\n"}, func(t *testing.T, e pyEnv) {
		// One session for the refused calls: they change nothing in it, and
		// a fresh session per case started the plugin (and on Podman a
		// container) afresh each time.
		s := e.session()
		e.write(t, s, "exists.txt", "here\n")
		long := strings.Repeat("a", maxWriteChars+1)
		for _, c := range []struct {
			name   string
			params map[string]any
			want   string
		}{
			{"empty code", map[string]any{"code": ""}, "code is empty"},
			{"code over 2,000 characters", map[string]any{"code": strings.Repeat("1", 2001)}, "code is 2001 characters, over the limit of 2,000"},
			{"control character", map[string]any{"code": "print(1)\x01"}, "control character U+0001"},
			{"carriage return", map[string]any{"code": "1\r\n"}, "control character U+000D"},
			{"missing code", map[string]any{}, "code"},
			{"unknown mode", map[string]any{"code": "1", "mode": "script"}, "mode"},
			{"invalid JSON global", map[string]any{"code": "x", "globals": map[string]string{"x": "{bad"}}, `globals["x"] is not valid JSON`},
			{"global not an identifier", map[string]any{"code": "1", "globals": map[string]string{"1x": "1"}}, `"1x" is not a Python identifier`},
			{"global a keyword", map[string]any{"code": "1", "globals": map[string]string{"class": "1"}}, `"class" is not a Python identifier`},
			{"global hides a helper", map[string]any{"code": "1", "globals": map[string]string{"read_text": "1"}}, `"read_text" is reserved`},
			{"dunder global", map[string]any{"code": "1", "globals": map[string]string{"__builtins__": "1"}}, `"__builtins__" is reserved`},
			{"read path with ..", map[string]any{"code": "1", "reads": []any{map[string]any{"path": "../etc/passwd"}}}, "'.' or '..'"},
			{"read path non-ASCII", map[string]any{"code": "1", "reads": []any{map[string]any{"path": "caf\u00e9.txt"}}}, "printable ASCII"},
			{"read path too deep", map[string]any{"code": "1", "reads": []any{map[string]any{"path": strings.Repeat("d/", 16) + "f"}}}, "depth exceeds"},
			{"read path segment too long", map[string]any{"code": "1", "reads": []any{map[string]any{"path": strings.Repeat("s", 81)}}}, "segment exceeds"},
			{"read of the root", map[string]any{"code": "1", "reads": []any{map[string]any{"path": "/workspace"}}}, "not the workspace root"},
			{"duplicate reads", map[string]any{"code": "1", "reads": []any{map[string]any{"path": "exists.txt"}, map[string]any{"path": "/workspace/exists.txt"}}}, ": exists.txt is listed twice"},
			{"missing read", map[string]any{"code": "1", "reads": []any{map[string]any{"path": "nope.txt"}}}, "reads[0]: nope.txt does not exist"},
			{"read named like a global", map[string]any{"code": "1", "globals": map[string]string{"data": "1"}, "reads": []any{map[string]any{"path": "data"}}}, "also a name in globals"},
			{"duplicate writes", map[string]any{"code": "1", "writes": []any{map[string]any{"path": "a.txt", "content": "1"}, map[string]any{"path": "a.txt", "content": "2", "mode": "append"}}}, ": a.txt is listed twice"},
			{"read and write overlap", map[string]any{"code": "1", "reads": []any{map[string]any{"path": "exists.txt"}}, "writes": []any{map[string]any{"path": "exists.txt", "content": "x", "mode": "overwrite"}}}, "also in reads"},
			{"write path with .", map[string]any{"code": "1", "writes": []any{map[string]any{"path": "./a.txt", "content": "x"}}}, "'.' or '..'"},
			{"write content over 48,000", map[string]any{"code": "1", "writes": []any{map[string]any{"path": "big.txt", "content": long}}}, "48001 characters, over the limit of 48,000"},
			{"unknown write mode", map[string]any{"code": "1", "writes": []any{map[string]any{"path": "a.txt", "content": "x", "mode": "replace"}}}, "mode"},
			{"create over an existing file", map[string]any{"code": "1", "writes": []any{map[string]any{"path": "exists.txt", "content": "x"}}}, "mode create never overwrites"},
		} {
			t.Run(c.name, func(t *testing.T) {
				before := len(e.py.runs())
				_, _, err := e.call(t, s, c.params)
				if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("want ErrInvalid with %q, got %v", c.want, err)
				}
				// Only the mock's python is the fake (and the backends run in
				// parallel, so another's runs would count here).
				if after := len(e.py.runs()); e.Mock != nil && after != before {
					t.Fatalf("python ran (%d runs) although the call was invalid", after-before)
				}
			})
		}
		t.Run("tab and newline are allowed", func(t *testing.T) {
			code := "if True:\n\tx = 1\nx"
			e.fake(code, canned{rec: &record{ValueRepr: ptr("1"), Globals: map[string]json.RawMessage{"x": json.RawMessage("1")}}})
			res, r := e.mustCall(t, e.session(), map[string]any{"code": code, "mode": "statements"})
			if !res.OK || r.ValueRepr == nil || *r.ValueRepr != "1" {
				t.Fatalf("%+v %+v", res, r)
			}
		})
	})
}

func TestModes(t *testing.T) {
	runPython(t, nil, func(t *testing.T, e pyEnv) {
		// The cases share a session: each runs a python3 of its own and
		// writes nothing, and on Podman a session is a container.
		s := e.session()
		t.Run("expr returns the value", func(t *testing.T) {
			e.fake("6*7", canned{rec: &record{ValueRepr: ptr("42"), Globals: map[string]json.RawMessage{}}})
			res, r := e.mustCall(t, s, map[string]any{"code": "6*7"})
			msg, _, _ := strings.Cut(res.Message, "\n\n[wai: this ran on the ")
			if !res.OK || r.ValueRepr == nil || *r.ValueRepr != "42" || r.ExitCode != 0 ||
				msg != "Evaluation succeeded (exit code 0).\nValue: 42\nSTDOUT:\n<empty>\nSTDERR:\n<empty>" {
				t.Fatalf("%q %+v", res.Message, r)
			}
		})
		t.Run("expr refuses assignments", func(t *testing.T) {
			for _, code := range []string{"x = 1", "(y := 2)"} {
				e.fake(code, canned{stderr: "SyntaxError: mode 'expr' refuses assignments\n", exit: 1,
					rec: &record{Status: 1, Globals: map[string]json.RawMessage{}}})
				res, r := e.mustCall(t, s, map[string]any{"code": code, "mode": "expr"})
				if res.OK || r.ValueRepr != nil || r.ExitCode != 1 || !strings.Contains(r.Stderr, "mode 'expr'") ||
					!strings.HasPrefix(res.Message, "Evaluation failed (exit code 1).") {
					t.Fatalf("%s: %q %+v", code, res.Message, r)
				}
			}
		})
		t.Run("non-ASCII code and values", func(t *testing.T) {
			code := "'caf\u00e9 \u2713'.upper()"
			e.fake(code, canned{rec: &record{ValueRepr: ptr("'CAF\u00c9 \u2713'"), Globals: map[string]json.RawMessage{}}})
			res, r := e.mustCall(t, s, map[string]any{"code": code})
			if !res.OK || *r.ValueRepr != "'CAF\u00c9 \u2713'" {
				t.Fatalf("%q %+v", res.Message, r)
			}
		})
		t.Run("statements return the last expression", func(t *testing.T) {
			code := "x = n + 1\nprint('hi')\nx * 2"
			e.fake(code, canned{printed: "hi\n", rec: &record{ValueRepr: ptr("42"),
				Globals: map[string]json.RawMessage{"n": json.RawMessage("20"), "x": json.RawMessage("21")}}})
			res, r := e.mustCall(t, s, map[string]any{"code": code, "mode": "statements", "globals": map[string]string{"n": "20"}})
			if !res.OK || *r.ValueRepr != "42" || r.Stdout != "hi\n" || string(r.Globals["x"]) != "21" || string(r.Globals["n"]) != "20" {
				t.Fatalf("%q %+v", res.Message, r)
			}
		})
		t.Run("statements without a final expression have no value", func(t *testing.T) {
			code := "import math\nr = math.floor(2.5)"
			e.fake(code, canned{rec: &record{Globals: map[string]json.RawMessage{"r": json.RawMessage("2"),
				"math": json.RawMessage(`"!repr:<module 'math'>"`)}}})
			res, r := e.mustCall(t, s, map[string]any{"code": code, "mode": "statements"})
			var m string
			_ = json.Unmarshal(r.Globals["math"], &m)
			if !res.OK || r.ValueRepr != nil || string(r.Globals["r"]) != "2" || !strings.HasPrefix(m, "!repr:<module 'math'") {
				t.Fatalf("%q %+v", res.Message, r)
			}
		})
		t.Run("globals round trip", func(t *testing.T) {
			in := map[string]string{"s": `"text"`, "i": "7", "f": "1.5", "b": "true", "z": "null", "l": "[1, 2]", "d": `{"a": 1}`}
			want := map[string]string{"s": `"text"`, "i": "7", "f": "1.5", "b": "true", "z": "null", "l": `"!repr:[1, 2]"`, "d": `"!repr:{'a': 1}"`}
			g := map[string]json.RawMessage{}
			for k, v := range want {
				g[k] = json.RawMessage(v)
			}
			e.fake("len(l) + d['a']", canned{rec: &record{ValueRepr: ptr("3"), Globals: g}})
			res, r := e.mustCall(t, s, map[string]any{"code": "len(l) + d['a']", "globals": in})
			if !res.OK || *r.ValueRepr != "3" {
				t.Fatalf("%q %+v", res.Message, r)
			}
			for k, v := range want {
				if got := compact(t, r.Globals[k]); got != compact(t, json.RawMessage(v)) {
					t.Errorf("global %s came back as %s, want %s", k, got, v)
				}
			}
		})
		t.Run("failure reports stderr and no value", func(t *testing.T) {
			e.fake("1/0", canned{exit: 1, stderr: "Traceback (most recent call last):\n  File \"<code>\", line 1, in <module>\nZeroDivisionError: division by zero\n",
				rec: &record{Status: 1, Globals: map[string]json.RawMessage{}}})
			res, r := e.mustCall(t, s, map[string]any{"code": "1/0"})
			if res.OK || r.ValueRepr != nil || r.ExitCode != 1 || !strings.Contains(r.Stderr, "ZeroDivisionError") ||
				strings.Contains(r.Stderr, "<wai-eval>") || !strings.HasPrefix(res.Message, "Evaluation failed (exit code 1).") {
				t.Fatalf("%q %+v", res.Message, r)
			}
		})
		t.Run("streams capped at 4,096 characters", func(t *testing.T) {
			code := "print('x'*10000)\nimport sys\nprint('e'*10000, file=sys.stderr)"
			e.fake(code, canned{printed: strings.Repeat("x", maxStreamChars+64), stderr: strings.Repeat("e", maxStreamChars+64),
				rec: &record{Globals: map[string]json.RawMessage{}}})
			_, r := e.mustCall(t, s, map[string]any{"code": code, "mode": "statements"})
			for name, s := range map[string]string{"stdout": r.Stdout, "stderr": r.Stderr} {
				if n := len([]rune(s)); n > maxStreamChars || !strings.Contains(s, "[truncated") {
					t.Fatalf("%s of 10,001 characters came back as %d: %.80q", name, n, s)
				}
			}
		})
		t.Run("runs in the workspace", func(t *testing.T) {
			e.write(t, s, "sub/marker.txt", "in the workspace")
			code := "open('sub/marker.txt').read()"
			e.fake(code, canned{rec: &record{ValueRepr: ptr("'in the workspace'"), Globals: map[string]json.RawMessage{}}})
			res, r := e.mustCall(t, s, map[string]any{"code": code})
			if !res.OK || *r.ValueRepr != "'in the workspace'" {
				t.Fatalf("%q %+v", res.Message, r)
			}
			if e.Mock != nil {
				if in := e.py.lastRun(code); in.Mode != "expr" || in.StreamChars <= maxStreamChars {
					t.Fatalf("driver input %+v", in)
				}
			}
		})
	})
}

func ptr(s string) *string { return &s }

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func hasPython(t *testing.T, e *tooltest.Env) bool {
	s, err := e.Kernel.Session(t.Context(), "", host.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	w, err := s.Shell().Which(t.Context(), "python3")
	if err != nil {
		t.Fatal(err)
	}
	return w.Found()
}
