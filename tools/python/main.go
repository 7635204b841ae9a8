// Command python is the bundled tool plugin evaluate_python (docs/ARCHITECTURE.md):
// `python3 -c CODE` in the session's workspace with a fixed five-second
// timeout and 4,096 characters per stream. It is a convenience over
// shell_execute for quick calculations and checks; everything it does goes
// through the same shell capability, limits and policies.
package main

import (
	"strconv"
	"time"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/shellfmt"
)

const (
	maxCodeChars   = 2000
	maxStreamChars = 4096
	evalTimeout    = 5 * time.Second
)

type params struct {
	Code string `json:"code" jsonschema:"Python 3 source run with python3 -c in the workspace; ASCII, at most 2,000 characters; print what you want to see"`
}

type result struct {
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	ExitCode   int    `json:"exit_code"`
	TimedOut   bool   `json:"timed_out"`
	DurationMS int64  `json:"duration_ms"`
}

// The annotations are static while the backend is not: commands reach the
// network on the host backend (and on podman when its config allows it),
// so the tool claims an open world rather than a closed one it cannot
// promise; and a command can change or delete workspace files.
func init() {
	pdk.Declare("python", "1.0.0", pdk.CapShell)
	pdk.Tool("evaluate_python", "Run a short Python 3 snippet (python3 -c) in the workspace with a 5-second timeout; stdout and stderr are returned, each capped at 4,096 characters.",
		run, pdk.Destructive(true), pdk.OpenWorld(true), pdk.Title("Evaluate Python"))
}

func run(_ *pdk.Call, p params) (pdk.Result, error) {
	if err := checkCode(p.Code); err != nil {
		return pdk.Result{}, err
	}
	res, err := pdk.Shell.Exec(pdk.ExecRequest{Argv: []string{"python3", "-c", p.Code}, Timeout: evalTimeout})
	if err != nil {
		return pdk.Result{}, err
	}
	r := result{
		Stdout:     shellfmt.Chars(res.Stdout, maxStreamChars),
		Stderr:     shellfmt.Chars(res.Stderr, maxStreamChars),
		ExitCode:   res.ExitCode,
		TimedOut:   res.TimedOut,
		DurationMS: shellfmt.Millis(res.Duration),
	}
	var headline string
	switch {
	case r.TimedOut:
		r.ExitCode = pdk.TimeoutExitCode
		headline = "Evaluation timed out."
	case r.ExitCode == 0:
		headline = "Evaluation succeeded (exit code 0)."
	default:
		headline = "Evaluation failed (exit code " + strconv.Itoa(r.ExitCode) + ")."
	}
	msg := shellfmt.Block(headline, nil, r.Stdout, r.Stderr)
	if r.ExitCode != 0 || r.TimedOut {
		return pdk.FailWith(msg, r), nil
	}
	return pdk.OK(msg, r), nil
}

func checkCode(code string) error {
	if len(code) == 0 {
		return pdk.Errorf(pdk.KindInvalid, "code is empty: give the Python source to run")
	}
	for i := 0; i < len(code); i++ {
		if code[i] >= 0x80 {
			return pdk.Errorf(pdk.KindInvalid, "code is not ASCII (byte %d): write non-ASCII text with escapes such as \\u00e9", i)
		}
		if code[i] == 0 {
			return pdk.Errorf(pdk.KindInvalid, "code contains a NUL byte")
		}
	}
	if len(code) > maxCodeChars {
		return pdk.Errorf(pdk.KindInvalid, "code is %d characters, over the limit of 2,000: write a script to a file and run it with shell_execute", len(code))
	}
	return nil
}

func main() {}
