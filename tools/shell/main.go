// Command shell is the bundled tool plugin shell_execute (docs/ARCHITECTURE.md): one
// argv command, no shell, in the session's workspace, on whatever backend
// the session runs. Its limits are the model-facing ones of docs/ARCHITECTURE.md, tighter
// than the host's protocol limits, and are checked here so the model gets
// one stable message per rule before anything runs.
package main

import (
	"strconv"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/cmdlimits"
	"github.com/wai-dev/wai/tools/internal/shellfmt"
)

// Limits of the shell_execute contract (docs/ARCHITECTURE.md). The
// timeout's range and the output budget are the host's too
// (cmdlimits): the configuration changes them.
const (
	maxCommandChars = 4096
	maxEnvVars      = 64
	maxEnvKeyChars  = 80
	maxEnvValChars  = 512
	maxCwdDepth     = 16
	maxSegmentChars = 80
	maxStdinChars   = 48000
)

type params struct {
	Command        []string          `json:"command" jsonschema:"the program and its arguments, run directly without a shell (use [\"sh\",\"-c\",\"...\"] for pipes); ASCII, at most 4,096 characters together"`
	Cwd            string            `json:"cwd,omitempty" jsonschema:"working directory relative to the workspace root (default the root); at most 16 segments of at most 80 characters, no . or .."`
	Env            map[string]string `json:"env,omitempty" jsonschema:"extra environment variables (at most 64; names upper-cased, ASCII, at most 80 characters; values ASCII, at most 512 characters)"`
	Stdin          *string           `json:"stdin,omitempty" jsonschema:"text passed on standard input, at most 48,000 characters (and, as UTF-8, within the host's stdin limit: 64 KiB by default)"`
	TimeoutSeconds *float64          `json:"timeout_seconds,omitempty" jsonschema:"seconds before the command is killed; the default and the range it is clamped to are in the tool's description"`
	CaptureOutput  *bool             `json:"capture_output,omitempty" jsonschema:"false discards stdout and stderr" default:"true"`
}

// result is the structured value; the message is the same facts as text.
type result struct {
	Command    []string `json:"command"`
	Cwd        string   `json:"cwd"`
	ExitCode   int      `json:"exit_code"`
	Stdout     string   `json:"stdout"`
	Stderr     string   `json:"stderr"`
	DurationMS int64    `json:"duration_ms"`
	TimedOut   bool     `json:"timed_out"`
	// TimeoutSeconds is the timeout the command ran with: the one asked
	// for, clamped, or the default.
	TimeoutSeconds float64 `json:"timeout_seconds"`
	// TimeoutNote says the timeout asked for was clamped, and to what.
	TimeoutNote string `json:"timeout_note,omitempty"`
}

// The annotations are static while the backend is not: commands reach the
// network on the host backend (and on podman when its config allows it),
// so the tool claims an open world rather than a closed one it cannot
// promise; and a command can change or delete workspace files.
func init() {
	pdk.Declare("shell", "1.0.0", pdk.CapShell)
	pdk.Tool("shell_execute", "Run a short command inside the workspace. The command is an argv list run directly, without a shell; the result gives the exit code, stdout, stderr (each capped, head and tail kept), the duration and whether it timed out (exit code 124).",
		run, pdk.Returns[result](), pdk.Destructive(true), pdk.OpenWorld(true), pdk.Title("Run a command"))
}

func run(_ *pdk.Call, p params) (pdk.Result, error) {
	lim, err := cmdlimits.Load()
	if err != nil {
		return pdk.Result{}, err
	}
	req, note, err := validate(p, lim)
	if err != nil {
		return pdk.Result{}, err
	}
	res, err := pdk.Shell.Exec(req)
	if err != nil {
		return pdk.Result{}, err
	}
	budget := lim.OutputBytes
	r := result{
		Command:        p.Command,
		Cwd:            displayCwd(req.Cwd),
		ExitCode:       res.ExitCode,
		Stdout:         shellfmt.Bytes(res.Stdout, budget),
		Stderr:         shellfmt.Bytes(res.Stderr, budget),
		DurationMS:     shellfmt.Millis(res.Duration),
		TimedOut:       res.TimedOut,
		TimeoutSeconds: req.Timeout.Seconds(),
		TimeoutNote:    note,
	}
	if r.TimedOut {
		// Whatever the backend reports, the contract is 124.
		r.ExitCode = pdk.TimeoutExitCode
	}
	if req.DiscardOutput {
		r.Stdout, r.Stderr = shellfmt.CaptureDisabled, shellfmt.CaptureDisabled
	}
	msg := render(r)
	if r.ExitCode != 0 || r.TimedOut {
		return pdk.FailWith(msg, r), nil
	}
	return pdk.OK(msg, r), nil
}

func render(r result) string {
	fields := []shellfmt.Field{
		{Name: "Command", Value: shellfmt.Quote(r.Command)},
		{Name: "CWD", Value: r.Cwd},
		{Name: "Exit code", Value: strconv.Itoa(r.ExitCode)},
		{Name: "Timed out", Value: strconv.FormatBool(r.TimedOut)},
		{Name: "Duration", Value: strconv.FormatInt(r.DurationMS, 10) + " ms"},
	}
	if r.TimeoutNote != "" {
		fields = append(fields, shellfmt.Field{Name: "Timeout", Value: r.TimeoutNote})
	}
	return shellfmt.Block(shellfmt.Headline(r.ExitCode, r.TimedOut, 0), fields, r.Stdout, r.Stderr)
}

func displayCwd(cwd string) string {
	if cwd == "" {
		return "."
	}
	return cwd
}

func main() {}
