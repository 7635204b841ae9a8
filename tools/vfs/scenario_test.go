package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
)

// An agent's loop in seed 002's spirit, through the bundled tools only:
// write a module and its tests, run them (one fails), read the module,
// fix the bug with edit_file, run again: they pass.
func TestScenarioFixABugWithTheTools(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		msg := "python3 is not on this machine's PATH; the host backend runs the tests with it"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	k := newKernel(t)
	c := session(t, k)

	c.ok("write_file", P{"file_path": "/workspace/calc/ops.py", "content": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"})
	c.ok("write_file", P{"file_path": "calc/__init__.py", "content": ""})
	c.ok("write_file", P{"file_path": "test_ops.py", "content": strings.Join([]string{
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
	}, "\n")})

	run := func() (exit int, stderr string) {
		t.Helper()
		// No bytecode cache: Python trusts a .pyc whose source has the same
		// size and mtime second, and this fix changes neither ("-" → "+"
		// within the second the module was written).
		res := c.call("shell_execute", P{
			"command":         []string{"python3", "-m", "unittest", "-v"},
			"env":             P{"PYTHONDONTWRITEBYTECODE": "1"},
			"timeout_seconds": 60,
		})
		var v struct {
			ExitCode int    `json:"exit_code"`
			Stderr   string `json:"stderr"`
			TimedOut bool   `json:"timed_out"`
		}
		value(t, res, &v)
		if v.TimedOut {
			t.Fatalf("unittest timed out: %s", res.Message)
		}
		return v.ExitCode, v.Stderr
	}

	exit, stderr := run()
	if exit == 0 || !strings.Contains(stderr, "FAIL: test_add") || !strings.Contains(stderr, "test_mul") {
		t.Fatalf("the buggy module must fail test_add only; exit %d:\n%s", exit, stderr)
	}

	// The model finds the bug and reads the file before editing it, as
	// read_before_write wants (write_file made it known, so reading is the
	// agent's habit here, not the kernel's demand).
	if got := c.ok("grep", P{"pattern": `return a \- b`, "glob": "*.py"}); got != "/calc/ops.py:2:     return a - b" {
		t.Fatalf("grep for the bug: %q", got)
	}
	if got := c.ok("read_file", P{"file_path": "calc/ops.py", "limit": 2}); !strings.Contains(got, "   2 |     return a - b") {
		t.Fatalf("read_file: %q", got)
	}
	c.ok("edit_file", P{"file_path": "calc/ops.py", "old_string": "return a - b", "new_string": "return a + b"})

	exit, stderr = run()
	if exit != 0 || !strings.Contains(stderr, "Ran 2 tests") || !strings.Contains(stderr, "OK") {
		t.Fatalf("after the fix the tests must pass; exit %d:\n%s", exit, stderr)
	}
	if got := c.ok("glob", P{"pattern": "**/*.py"}); got != "/calc/__init__.py\n/calc/ops.py\n/test_ops.py" {
		t.Errorf("the workspace holds what the agent wrote: %q", got)
	}
}

func value(t *testing.T, res host.ToolResult, v any) {
	t.Helper()
	if err := json.Unmarshal(res.Value, v); err != nil {
		t.Fatalf("value %s: %v", res.Value, err)
	}
}
