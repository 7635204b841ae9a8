package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/internal/tooltest"
)

// An agent's loop as the protocol expects it, through the bundled tools only:
// write a module and its tests, run them (one fails), read the module,
// fix the bug with edit_file, run again: they pass. On every backend whose
// commands really run (the mock's canned results have no bug to fix).
func TestScenarioFixABugWithTheTools(t *testing.T) {
	// Not on the mock: it runs no commands, so there is no test run to fix.
	reals := tooltest.Only(t, func(b tooltest.Backend) bool { return b.Real })
	tooltest.RunOn(t, reals, []string{"tools/vfs", "tools/shell"}, nil, func(t *testing.T, e *tooltest.Env) {
		if e.Backend.Name == "host" {
			if _, err := exec.LookPath("python3"); err != nil {
				msg := "python3 is not on this machine's PATH; the host backend runs the tests with it"
				if os.Getenv("CI") == "true" {
					t.Fatal(msg)
				}
				t.Skip(msg)
			}
		}
		scenario(t, session(t, e.Kernel))
	})
}

// runner is how the scenario's tests run: unittest where the image has it;
// the Podman test image is python3-minimal, which lacks unittest, so there
// the same checks are plain asserts in a script.
type runner struct {
	file, content    string
	argv             []string
	failWant, okWant string
}

var (
	withUnittest = runner{
		file: "test_ops.py",
		content: strings.Join([]string{
			"import unittest",
			"",
			"from calc.ops import add, mul",
			"",
			"",
			"class OpsTest(unittest.TestCase):",
			"    def test_add(self):",
			"        self.assertEqual(add(2, 3), 5)",
			"",
			"    def test_mul(self):",
			"        self.assertEqual(mul(2, 3), 6)",
			"",
		}, "\n"),
		argv:     []string{"python3", "-m", "unittest", "-v"},
		failWant: "FAIL: test_add",
		okWant:   "Ran 2 tests",
	}
	withAsserts = runner{
		file: "test_ops.py",
		content: strings.Join([]string{
			"from calc.ops import add, mul",
			"",
			"assert mul(2, 3) == 6, 'mul(2, 3) == %r' % mul(2, 3)",
			"assert add(2, 3) == 5, 'add(2, 3) == %r' % add(2, 3)",
			"print('Ran 2 checks: OK')",
			"",
		}, "\n"),
		argv:     []string{"python3", "test_ops.py"},
		failWant: "AssertionError: add(2, 3) == -1",
		okWant:   "Ran 2 checks: OK",
	}
)

func scenario(t *testing.T, c client) {
	r := withUnittest
	probe := c.call("shell_execute", P{"command": []string{"python3", "-c", "import unittest"}})
	var pv struct {
		ExitCode int `json:"exit_code"`
	}
	value(t, probe, &pv)
	if pv.ExitCode != 0 {
		r = withAsserts
	}

	c.ok("write_file", P{"file_path": "/workspace/calc/ops.py", "content": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"})
	c.ok("write_file", P{"file_path": "calc/__init__.py", "content": ""})
	c.ok("write_file", P{"file_path": r.file, "content": r.content})

	run := func() (exit int, output string) {
		t.Helper()
		// No bytecode cache: Python trusts a .pyc whose source has the same
		// size and mtime second, and this fix changes neither ("-" → "+"
		// within the second the module was written).
		res := c.call("shell_execute", P{
			"command":         r.argv,
			"env":             P{"PYTHONDONTWRITEBYTECODE": "1"},
			"timeout_seconds": 60,
		})
		var v struct {
			ExitCode int    `json:"exit_code"`
			Stdout   string `json:"stdout"`
			Stderr   string `json:"stderr"`
			TimedOut bool   `json:"timed_out"`
		}
		value(t, res, &v)
		if v.TimedOut {
			t.Fatalf("the tests timed out: %s", res.Message)
		}
		return v.ExitCode, v.Stdout + v.Stderr
	}

	exit, output := run()
	if exit == 0 || !strings.Contains(output, r.failWant) {
		t.Fatalf("the buggy module must fail (%q); exit %d:\n%s", r.failWant, exit, output)
	}

	// The model finds the bug and reads the file before editing it, as
	// read_before_write wants (write_file made it known, so reading is the
	// agent's habit here, not the kernel's demand).
	if got := c.ok("grep", P{"pattern": `return a \- b`, "glob": "*.py"}); got != "calc/ops.py:2:     return a - b" {
		t.Fatalf("grep for the bug: %q", got)
	}
	if got := c.ok("read_file", P{"file_path": "calc/ops.py", "limit": 2}); !strings.Contains(got, "   2 |     return a - b") {
		t.Fatalf("read_file: %q", got)
	}
	c.ok("edit_file", P{"file_path": "calc/ops.py", "old_string": "return a - b", "new_string": "return a + b"})

	exit, output = run()
	if exit != 0 || !strings.Contains(output, r.okWant) || !strings.Contains(output, "OK") {
		t.Fatalf("after the fix the tests must pass; exit %d:\n%s", exit, output)
	}
	if got := c.ok("glob", P{"pattern": "**/*.py"}); got != "calc/__init__.py\ncalc/ops.py\ntest_ops.py" {
		t.Errorf("the workspace holds what the agent wrote: %q", got)
	}
}

func value(t *testing.T, res host.ToolResult, v any) {
	t.Helper()
	if err := json.Unmarshal(res.Value, v); err != nil {
		t.Fatalf("value %s: %v", res.Value, err)
	}
}
