package main

import (
	"os"
	"strings"
	"testing"

	"github.com/wai-dev/wai/internal/tooltest"
)

// The contract's "write a script, then execute it", as an agent does it in one
// session: write a module and its test with the VFS tools, run the test
// with shell_execute and see it fail, read and fix the module, run again.
func TestScenarioWriteTestFix(t *testing.T) {
	if _, err := os.Stat("../vfs"); err != nil {
		t.Skip("tools/vfs is not in this checkout")
	}
	// Not on the mock: it runs no python.
	reals := tooltest.Only(t, func(b tooltest.Backend) bool { return b.Real })
	tooltest.RunOn(t, reals, []string{"tools/shell", "tools/vfs"}, nil, func(t *testing.T, e *tooltest.Env) {
		call := func(wantOK bool, tool, params string) string {
			t.Helper()
			res, err := e.CallIn(t, "shell-scenario", tool, params)
			if err != nil || res.OK != wantOK {
				t.Fatalf("%s %s: want ok=%v, got %+v, %v", tool, params, wantOK, res, err)
			}
			return res.Message
		}
		call(true, "write_file", `{"file_path":"calc.py","content":"def add(a, b):\n    return a - b\n"}`)
		call(true, "write_file", `{"file_path":"test_calc.py","content":"from calc import add\n\ngot = add(2, 3)\nassert got == 5, 'add(2, 3) = %d, want 5' % got\nprint('OK')\n"}`)
		if out := call(false, "shell_execute", `{"command":["python3","-B","test_calc.py"]}`); !strings.Contains(out, "AssertionError: add(2, 3) = -1, want 5") {
			if strings.Contains(out, "No such file") || strings.Contains(out, "not found") {
				if os.Getenv("CI") == "true" {
					t.Fatalf("python3 is required on CI:\n%s", out)
				}
				t.Skipf("no python3 here:\n%s", out)
			}
			t.Fatalf("the buggy module must fail its test:\n%s", out)
		}
		call(true, "read_file", `{"file_path":"calc.py"}`)
		call(true, "edit_file", `{"file_path":"calc.py","old_string":"a - b","new_string":"a + b"}`)
		if out := call(true, "shell_execute", `{"command":["python3","-B","test_calc.py"]}`); !strings.Contains(out, "STDOUT:\nOK") {
			t.Fatalf("the fixed module must pass:\n%s", out)
		}
	})
}
