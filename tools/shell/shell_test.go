package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/tooltest"
)

type shellValue struct {
	Command    []string `json:"command"`
	Cwd        string   `json:"cwd"`
	ExitCode   int      `json:"exit_code"`
	Stdout     string   `json:"stdout"`
	Stderr     string   `json:"stderr"`
	DurationMS int64    `json:"duration_ms"`
	TimedOut   bool     `json:"timed_out"`
	// TimeoutSeconds: the timeout the command ran with.
	TimeoutSeconds float64 `json:"timeout_seconds"`
	// TimeoutNote: the timeout asked for was clamped.
	TimeoutNote string `json:"timeout_note"`
}

func TestShellExecute(t *testing.T) {
	// The tool's own range goes to 120 s; the kernel's default deadline
	// must not cut it shorter. (Checked here, not in Run's adjust: that
	// runs in the backends' parallel subtests, where t is not theirs.)
	if d := host.DefaultConfig().ToolTimeout("shell_execute"); d <= 120*time.Second {
		t.Fatalf("default deadline of shell_execute is %s, shorter than its 120 s command timeout", d)
	}
	tooltest.Run(t, []string{"tools/shell"}, nil, func(t *testing.T, e *tooltest.Env) {
		t.Run("validation", func(t *testing.T) { validationCases(t, e) })
		t.Run("runs", func(t *testing.T) { runCases(t, e) })
	})
}

func validationCases(t *testing.T, e *tooltest.Env) {
	long := strings.Repeat("a", 4096)
	env65 := make([]string, 65)
	for i := range env65 {
		env65[i] = fmt.Sprintf(`"V%d":"x"`, i)
	}
	deep := strings.TrimSuffix(strings.Repeat("d/", 17), "/")
	cases := []struct{ name, params, want string }{
		{"empty command", `{"command":[]}`, "command is empty"},
		{"empty entry", `{"command":["echo",""]}`, "command[1] is empty"},
		{"non-ASCII entry", `{"command":["echo","héllo"]}`, "command[1] is not ASCII"},
		{"too long", `{"command":["echo","` + long + `"]}`, "command is 4101 characters, over the limit of 4,096"},
		{"too many env vars", `{"command":["true"],"env":{` + strings.Join(env65, ",") + `}}`, "env has 65 entries, over the limit of 64"},
		{"empty env name", `{"command":["true"],"env":{"":"x"}}`, "env has an empty name"},
		{"non-ASCII env name", `{"command":["true"],"env":{"CAFÉ":"x"}}`, "is not ASCII: names must be ASCII"},
		{"long env name", `{"command":["true"],"env":{"` + strings.Repeat("K", 81) + `":"x"}}`, "is 81 characters, over the limit of 80"},
		{"bad env name", `{"command":["true"],"env":{"1X":"x"}}`, "is not a valid variable name"},
		{"non-ASCII env value", `{"command":["true"],"env":{"X":"é"}}`, "env value of X is not ASCII"},
		{"NUL in an env value", `{"command":["true"],"env":{"X":"a\u0000b"}}`, "env value of X contains a NUL byte"},
		{"NUL in an entry", `{"command":["echo","a\u0000b"]}`, "argv[1] contains a NUL byte"},
		{"long env value", `{"command":["true"],"env":{"X":"` + strings.Repeat("v", 513) + `"}}`, "env value of X is 513 characters, over the limit of 512"},
		{"env names collide upper-cased", `{"command":["true"],"env":{"x":"1","X":"2"}}`, `env names "X" twice`},
		{"absolute cwd", `{"command":["true"],"cwd":"/etc"}`, `cwd "/etc" is absolute`},
		{"dot-dot cwd", `{"command":["true"],"cwd":"a/../b"}`, `contains ".."`},
		{"dot cwd", `{"command":["true"],"cwd":"./a"}`, `contains "."`},
		{"empty segment", `{"command":["true"],"cwd":"a//b"}`, "has an empty segment"},
		{"deep cwd", `{"command":["true"],"cwd":"` + deep + `"}`, "is 17 segments deep, over the limit of 16"},
		{"long segment", `{"command":["true"],"cwd":"` + strings.Repeat("s", 81) + `"}`, "has a segment of 81 characters, over the limit of 80"},
		{"non-ASCII cwd", `{"command":["true"],"cwd":"ré"}`, "is not ASCII"},
		// 40,000 characters are within the tool's 48,000 but, as UTF-8,
		// over the host's default 64 KiB of stdin: the host refuses, and
		// says what to do instead.
		{"non-ASCII stdin over the host's bytes", `{"command":["cat"],"stdin":"` + strings.Repeat("é", 40000) + `"}`, "stdin is 80000 bytes, over the limit of 65536: pass less, or write it to a file"},
		{"stdin too long", `{"command":["cat"],"stdin":"` + strings.Repeat("i", 48001) + `"}`, "stdin is 48001 characters, over the limit of 48,000"},
		{"unknown field", `{"command":["true"],"shell":"x"}`, "shell"},
		{"command not a list", `{"command":"echo hi"}`, "command"},
	}
	// One session for every case: a refused request changes nothing in
	// it, and a fresh session per case started the plugin's Go runtime
	// afresh each time (most of a second under -race).
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := e.CallIn(t, "shell-validation", "shell_execute", c.params)
			if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want ErrInvalid with %q, got %+v, %v", c.want, res, err)
			}
		})
	}
}

func runCases(t *testing.T, e *tooltest.Env) {
	// The cases that need no files share a session: on Podman a fresh
	// one is a container of its own.
	call := func(t *testing.T, params string) (host.ToolResult, shellValue) {
		t.Helper()
		res, err := e.CallIn(t, "shell-runs", "shell_execute", params)
		if err != nil {
			t.Fatalf("%s: %v", params, err)
		}
		var v shellValue
		tooltest.Value(t, res, &v)
		return res, v
	}
	canned := func(pattern string, r backend.ExecResult) {
		if e.Mock != nil {
			e.Mock.AddResponse(pattern, r)
		}
	}

	t.Run("text block", func(t *testing.T) {
		canned("echo hi", backend.ExecResult{Stdout: "hi\n"})
		res, v := call(t, `{"command":["echo","hi"]}`)
		if !res.OK || v.ExitCode != 0 || v.Stdout != "hi\n" || v.Stderr != "" || v.TimedOut || v.Cwd != "." || strings.Join(v.Command, " ") != "echo hi" {
			t.Fatalf("echo hi: %+v %+v", res, v)
		}
		for _, want := range []string{"Command succeeded (exit code 0).", "Command: echo hi\n", "CWD: .\n", "Exit code: 0\n", "Timed out: false\n", "Duration: ", " ms\n", "STDOUT:\nhi\n", "STDERR:\n<empty>"} {
			if !strings.Contains(res.Message, want) {
				t.Errorf("message lacks %q:\n%s", want, res.Message)
			}
		}
	})

	t.Run("non-zero exit is a failed result", func(t *testing.T) {
		canned("exit 3", backend.ExecResult{ExitCode: 3, Stderr: "bad\n"})
		res, v := call(t, `{"command":["sh","-c","echo bad >&2; exit 3"]}`)
		if res.OK || v.ExitCode != 3 || v.Stderr != "bad\n" || !strings.Contains(res.Message, "Command failed (exit code 3).") ||
			!strings.Contains(res.Message, "STDOUT:\n<empty>") || !strings.Contains(res.Message, "STDERR:\nbad") {
			t.Fatalf("exit 3: %+v %+v", res, v)
		}
	})

	t.Run("capture disabled", func(t *testing.T) {
		canned("echo secret", backend.ExecResult{})
		res, v := call(t, `{"command":["echo","secret"],"capture_output":false}`)
		if v.Stdout != "capture disabled" || v.Stderr != "capture disabled" || strings.Contains(res.Message, "STDOUT:\nsecret") {
			t.Fatalf("capture_output false: %+v %+v", res, v)
		}
	})

	t.Run("output capped at 32 KiB per stream", func(t *testing.T) {
		canned("head -c 40000", backend.ExecResult{Stdout: strings.Repeat("a", 40000), Truncated: true})
		_, v := call(t, `{"command":["sh","-c","head -c 40000 /dev/zero | tr '\\0' a"]}`)
		if len(v.Stdout) > 32*1024 || !strings.HasPrefix(v.Stdout, "aaaa") || !strings.HasSuffix(v.Stdout, "aaaa") {
			t.Fatalf("stdout of 40,000 bytes came back as %d bytes: %.80q", len(v.Stdout), v.Stdout)
		}
		// One marker, whoever cut (the backend's buffer, the tool), saying
		// how much is missing and what to do.
		if err := tooltest.CheckCut(v.Stdout, 40000, true); err != nil {
			t.Error(err)
		}
	})

	t.Run("timeout keeps partial output, exit 124", func(t *testing.T) {
		canned("sleep 30", backend.ExecResult{ExitCode: 124, TimedOut: true, Stdout: "partial\n"})
		start := time.Now()
		res, v := call(t, `{"command":["sh","-c","echo partial; sleep 30"],"timeout_seconds":1}`)
		if res.OK || !v.TimedOut || v.ExitCode != 124 || !strings.Contains(v.Stdout, "partial") ||
			!strings.Contains(res.Message, "Command timed out (exit code 124).") || !strings.Contains(res.Message, "Timed out: true") {
			t.Fatalf("timeout: %+v %+v", res, v)
		}
		if took := time.Since(start); took > 15*time.Second {
			t.Fatalf("a 1 s timeout took %s", took)
		}
	})

	t.Run("cwd env stdin reach the command", func(t *testing.T) {
		// Made through the session's FS, which every backend has (the
		// mock runs no mkdir).
		sess, err := e.Kernel.Session(context.Background(), "shell-cwd", host.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sess.FS().Write(context.Background(), backend.WriteRequest{Path: "sub/dir/.keep"}); err != nil {
			t.Fatal(err)
		}
		canned("printenv", backend.ExecResult{Stdout: "up\n/workspace/sub/dir\nin"})
		res, err := e.CallIn(t, "shell-cwd", "shell_execute", `{"command":["sh","-c","printenv LOWER; pwd; cat"],"cwd":"/workspace/sub/dir/","env":{"lower":"up"},"stdin":"in","timeout_seconds":0.2}`)
		if err != nil {
			t.Fatal(err)
		}
		var v shellValue
		tooltest.Value(t, res, &v)
		if !res.OK || v.Cwd != "sub/dir" || !strings.HasPrefix(v.Stdout, "up\n") || !strings.Contains(v.Stdout, "/sub/dir\n") || !strings.HasSuffix(v.Stdout, "in") {
			t.Fatalf("cwd/env/stdin: %+v %+v", res, v)
		}
		if e.Mock != nil {
			calls := e.Mock.Calls()
			last := calls[len(calls)-1].Exec
			if last.Cwd != "sub/dir" || last.Env["LOWER"] != "up" || last.Stdin != "in" || last.Timeout != time.Second {
				t.Fatalf("the backend got cwd %q env %v stdin %q timeout %s", last.Cwd, last.Env, last.Stdin, last.Timeout)
			}
		}
	})

	// Every limit is inclusive: a request exactly at each one runs.
	t.Run("requests at the limits run", func(t *testing.T) {
		canned("at-limit", backend.ExecResult{Stdout: "at-limit\n"})
		argv := `["echo","at-limit","` + strings.Repeat("a", 4096-len("echo at-limit ")) + `"]`
		if res, v := call(t, `{"command":`+argv+`}`); !res.OK || !strings.HasPrefix(v.Stdout, "at-limit") {
			t.Fatalf("a command of exactly 4,096 characters: %+v", res)
		}

		seg := strings.Repeat("s", 80)
		cwd := strings.TrimSuffix(strings.Repeat(seg+"/", 16), "/")
		sess, err := e.Kernel.Session(context.Background(), "shell-limits", host.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sess.FS().Write(context.Background(), backend.WriteRequest{Path: cwd + "/.keep"}); err != nil {
			t.Fatal(err)
		}
		env := make([]string, 64)
		for i := range env {
			env[i] = fmt.Sprintf(`"%s":"%s"`, fmt.Sprintf("K%079d", i), strings.Repeat("v", 512))
		}
		canned("wc -c", backend.ExecResult{Stdout: "48000\n"})
		res, err := e.CallIn(t, "shell-limits", "shell_execute", `{"command":["wc","-c"],"cwd":"`+cwd+`","env":{`+strings.Join(env, ",")+`},"stdin":"`+strings.Repeat("i", 48000)+`"}`)
		if err != nil {
			t.Fatalf("cwd of 16 segments of 80, 64 env vars of 80/512, stdin of 48,000: %v", err)
		}
		var v shellValue
		tooltest.Value(t, res, &v)
		if !res.OK || strings.TrimSpace(v.Stdout) != "48000" || v.Cwd != cwd {
			t.Fatalf("at the limits: %+v %+v", res, v)
		}
		if e.Mock != nil {
			calls := e.Mock.Calls()
			last := calls[len(calls)-1].Exec
			if len(last.Env) != 64 || len(last.Stdin) != 48000 || last.Cwd != cwd {
				t.Fatalf("the backend got %d env vars, stdin of %d, cwd %q", len(last.Env), len(last.Stdin), last.Cwd)
			}
		}
	})

	t.Run("timeout clamped to 120 s", func(t *testing.T) {
		if e.Mock == nil {
			t.Skip("only the mock records the timeout a request carried")
		}
		canned("clamp-me", backend.ExecResult{})
		res, v := call(t, `{"command":["echo","clamp-me"],"timeout_seconds":1000}`)
		// Not cut silently: the result says what ran and what to use.
		const note = "timeout_seconds 1000 is over the 120 s maximum, so the command ran with 120 s; run longer work as a background job (job_start"
		if !strings.Contains(res.Message, "Timeout: "+note) || !strings.HasPrefix(v.TimeoutNote, note) {
			t.Fatalf("a clamped timeout is not reported: %q %+v", res.Message, v)
		}
		calls := e.Mock.Calls()
		if got := calls[len(calls)-1].Exec.Timeout; got != 120*time.Second {
			t.Fatalf("timeout_seconds 1000 reached the backend as %s, want 120s", got)
		}
		if res, v := call(t, `{"command":["echo","clamp-me"]}`); strings.Contains(res.Message, "Timeout:") || v.TimeoutNote != "" {
			t.Fatalf("a timeout in range is reported as clamped: %q", res.Message)
		}
		calls = e.Mock.Calls()
		if got := calls[len(calls)-1].Exec.Timeout; got != 30*time.Second {
			t.Fatalf("no timeout_seconds reached the backend as %s, want the default 30s", got)
		}
	})

	t.Run("a policy refusal stays a permission error", func(t *testing.T) {
		_, err := e.CallIn(t, "shell-runs", "shell_execute", `{"command":["rm","-rf","/"]}`)
		if !errors.Is(err, backend.ErrPermission) {
			t.Fatalf("rm -rf / through shell_execute: %v", err)
		}
	})
}
