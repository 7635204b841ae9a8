package main

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/tooltest"
)

type evalValue struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out"`
}

func TestEvaluatePython(t *testing.T) {
	tooltest.Run(t, []string{"tools/python"}, nil, func(t *testing.T, e *tooltest.Env) {
		if e.Backend.Real && !hasPython(t, e) {
			if os.Getenv("CI") == "true" {
				t.Fatal("python3 is required on CI: evaluate_python runs it")
			}
			t.Skip("python3 is not on this machine's PATH")
		}
		canned := func(pattern string, r backend.ExecResult) {
			if e.Mock != nil {
				e.Mock.AddResponse(pattern, r)
			}
		}
		for _, c := range []struct{ name, params, want string }{
			{"empty", `{"code":""}`, "code is empty"},
			{"non-ASCII", `{"code":"print('é')"}`, "code is not ASCII"},
			{"too long", `{"code":"` + strings.Repeat("1", 2001) + `"}`, "code is 2001 characters, over the limit of 2,000"},
			{"NUL", `{"code":"print(1)\u0000"}`, "code contains a NUL byte"},
			{"missing", `{}`, "code"},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := e.Call(t, "evaluate_python", c.params)
				if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("want ErrInvalid with %q, got %v", c.want, err)
				}
			})
		}

		call := func(t *testing.T, code string) (bool, string, evalValue) {
			t.Helper()
			res, err := e.Call(t, "evaluate_python", `{"code":`+quote(code)+`}`)
			if err != nil {
				t.Fatal(err)
			}
			var v evalValue
			tooltest.Value(t, res, &v)
			// Without the line the kernel ends an unsandboxed result with.
			msg, _, _ := strings.Cut(res.Message, "\n\n[wai: this ran on the ")
			return res.OK, msg, v
		}

		t.Run("succeeds", func(t *testing.T) {
			canned("print(6*7)", backend.ExecResult{Stdout: "42\n"})
			ok, msg, v := call(t, "print(6*7)")
			if !ok || v.Stdout != "42\n" || msg != "Evaluation succeeded (exit code 0).\nSTDOUT:\n42\nSTDERR:\n<empty>" {
				t.Fatalf("%v %q %+v", ok, msg, v)
			}
		})
		t.Run("fails", func(t *testing.T) {
			canned("1/0", backend.ExecResult{ExitCode: 1, Stderr: "ZeroDivisionError: division by zero\n"})
			ok, msg, v := call(t, "1/0")
			if ok || v.ExitCode != 1 || !strings.HasPrefix(msg, "Evaluation failed (exit code 1).") || !strings.Contains(v.Stderr, "ZeroDivisionError") {
				t.Fatalf("%v %q %+v", ok, msg, v)
			}
		})
		t.Run("times out after 5 s", func(t *testing.T) {
			canned("time.sleep", backend.ExecResult{ExitCode: 124, TimedOut: true, Stdout: "before\n"})
			start := time.Now()
			ok, msg, v := call(t, "import time\nprint('before', flush=True)\ntime.sleep(30)")
			took := time.Since(start)
			if ok || !v.TimedOut || v.ExitCode != 124 || !strings.HasPrefix(msg, "Evaluation timed out.") || !strings.Contains(v.Stdout, "before") {
				t.Fatalf("%v %q %+v", ok, msg, v)
			}
			if e.Backend.Real && (took < 4*time.Second || took > 20*time.Second) {
				t.Fatalf("the 5 s timeout took %s", took)
			}
		})
		t.Run("streams capped at 4,096 characters", func(t *testing.T) {
			canned("'x'*10000", backend.ExecResult{Stdout: strings.Repeat("x", 10000) + "\n"})
			_, _, v := call(t, "print('x'*10000)")
			if n := len([]rune(v.Stdout)); n > 4096 || !strings.Contains(v.Stdout, "[truncated]") {
				t.Fatalf("stdout of 10,001 characters came back as %d", n)
			}
		})
		t.Run("runs in the workspace", func(t *testing.T) {
			canned("getcwd", backend.ExecResult{Stdout: "/workspace\n"})
			_, _, v := call(t, "import os; print(os.getcwd())")
			if e.Mock != nil {
				calls := e.Mock.Calls()
				last := calls[len(calls)-1].Exec
				if strings.Join(last.Argv[:2], " ") != "python3 -c" || last.Cwd != "" || last.Timeout != 5*time.Second {
					t.Fatalf("the backend got %+v", last)
				}
				return
			}
			// The workspace is where the session's files are: a file made
			// through the session's FS is there under its relative name.
			sess, err := e.Kernel.Session(t.Context(), "py-workspace", host.SessionOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sess.FS().Write(t.Context(), backend.WriteRequest{Path: "sub/marker.txt", Content: "in the workspace"}); err != nil {
				t.Fatal(err)
			}
			res, err := e.CallIn(t, "py-workspace", "evaluate_python", `{"code":"print(open('sub/marker.txt').read())"}`)
			if err != nil {
				t.Fatal(err)
			}
			tooltest.Value(t, res, &v)
			if !res.OK || v.Stdout != "in the workspace\n" {
				t.Fatalf("evaluate_python did not run in the workspace (cwd %q): %+v", v.Stdout, res)
			}
		})
	})
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

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
