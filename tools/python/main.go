// Command python is the bundled tool plugin evaluate_python
// (docs/ARCHITECTURE.md): Python 3 run with python3 in the session's
// workspace, with a fixed five-second timeout and 4,096 characters per
// stream, in expr or statements mode, with JSON globals, files bound as
// reads and files written after a successful run.
//
// The plugin validates the call, reads the reads through the filesystem
// capability, and runs a driver (driver.py) with the shell capability;
// the driver reports the value, the final globals and the pending writes
// after a marker only this call knows. The plugin checks that record
// strictly and applies the writes through the filesystem capability, so
// policies, read-before-write and limits judge them like write_file's.
// A run that fails or times out (the host kills it) writes nothing.
package main

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/cmdlimits"
	"github.com/wai-dev/wai/tools/internal/shellfmt"
)

const evalTimeout = 5 * time.Second

// result is the tool's structured value.
type result struct {
	ValueRepr  *string                    `json:"value_repr" jsonschema:"repr() of the value, null when there is none"`
	Stdout     string                     `json:"stdout" jsonschema:"at most 4,096 characters"`
	Stderr     string                     `json:"stderr" jsonschema:"at most 4,096 characters"`
	Globals    map[string]json.RawMessage `json:"globals" jsonschema:"the final globals: JSON strings, numbers, booleans and null as they are; anything else as \"!repr:\" + repr(value)"`
	Reads      []readSpec                 `json:"reads" jsonschema:"the files bound, as given"`
	Writes     []writeSpec                `json:"writes" jsonschema:"the files written, with the content written; empty when the run failed"`
	ExitCode   int                        `json:"exit_code"`
	TimedOut   bool                       `json:"timed_out"`
	DurationMS int64                      `json:"duration_ms"`
}

// The annotations are static while the backend is not: code reaches the
// network on the host backend (and on podman when its config allows it),
// so the tool claims an open world rather than a closed one it cannot
// promise; and code can change or delete workspace files.
func init() {
	pdk.Declare("python", "2.0.0", pdk.CapShell, pdk.CapFSRead, pdk.CapFSWrite)
	pdk.Tool("evaluate_python", "Run Python 3 in the workspace (python3, 5-second timeout, or the host's max_timeout if lower). mode \"expr\" (default) evaluates one expression and returns its repr; \"statements\" runs statements and returns the last expression's value. globals binds names to JSON values; reads binds file texts under their paths (and vfs_reads); the code may call read_text(path) and write_text(path, content, mode=\"overwrite\"). writes (and write_text) are applied only after the code succeeds; their content may use {name} templates filled from the final globals. stdout and stderr are capped at 4,096 characters each. Each call starts a fresh interpreter: nothing but files persists between calls, so pass values on through globals (the result returns the final globals, JSON-safe ones as they are).",
		run, pdk.Returns[result](), pdk.Destructive(true), pdk.OpenWorld(true), pdk.Title("Evaluate Python"))
}

func run(_ *pdk.Call, p params) (pdk.Result, error) {
	c, err := check(p)
	if err != nil {
		return pdk.Result{}, err
	}
	reads, err := loadReads(c.reads)
	if err != nil {
		return pdk.Result{}, err
	}
	if err := refuseExisting(c.writes, "writes"); err != nil {
		return pdk.Result{}, err
	}
	timeout, err := runTimeout()
	if err != nil {
		return pdk.Result{}, err
	}
	in, err := newInput(c, reads, timeout)
	if err != nil {
		return pdk.Result{}, pdk.Errorf(pdk.KindInternal, "evaluate_python: %v", err)
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		return pdk.Result{}, pdk.Errorf(pdk.KindInternal, "evaluate_python: %v", err)
	}
	res, err := pdk.Shell.Exec(pdk.ExecRequest{Argv: []string{"python3", "-c", bootstrap}, Stdin: string(stdin), Timeout: timeout})
	if err != nil {
		if pdk.KindOf(err) == pdk.KindInvalid && strings.Contains(err.Error(), "stdin") {
			return pdk.Result{}, invalid("the code, globals and reads make %d bytes of input, over what the sandbox accepts (%v): keep large files out of reads and open them with read_text in the code", len(stdin), err)
		}
		return pdk.Result{}, err
	}
	r := result{Reads: make([]readSpec, len(c.reads)), Writes: []writeSpec{}, Globals: map[string]json.RawMessage{},
		ExitCode: res.ExitCode, TimedOut: res.TimedOut, DurationMS: shellfmt.Millis(res.Duration)}
	for i, p := range c.reads {
		r.Reads[i] = readSpec{Path: p}
	}
	out := finish(&r, res, in)
	logRun(c, r)
	return out, nil
}

// finish fills r from the run and applies its writes when it succeeded.
func finish(r *result, res pdk.ExecResult, in driverInput) pdk.Result {
	r.Stderr = shellfmt.Chars(res.Stderr, maxStreamChars)
	printed, rec, err := parseRecord(res.Stdout, in.Marker, in)
	if res.TimedOut {
		// The host killed python3. Under load that can come just after
		// the driver reported: keep the globals it reported, and never
		// show the model the record or a cut piece of it.
		if err == nil {
			r.Globals = rec.Globals
		}
		return timedOut(r, printed, res.Stderr)
	}
	r.Stdout = shellfmt.Chars(printed, maxStreamChars)
	if err != nil {
		if r.ExitCode == 0 {
			r.ExitCode = 1
			why := " (did the code call os._exit or close stdout?)"
			if res.Truncated {
				why = " (the output was over the sandbox's output limit: print less, and write fewer or smaller files per call)"
			}
			r.Stderr = shellfmt.Chars(strings.TrimPrefix(r.Stderr+"\n"+err.Error()+why+"; nothing was written.", "\n"), maxStreamChars)
		}
		return pdk.FailWith(message(failed(r.ExitCode), r, "nothing was written"), *r)
	}
	if rec.TimedOut { // the driver stopped the code at its budget
		r.Globals = rec.Globals
		return timedOut(r, printed, res.Stderr)
	}
	r.ValueRepr, r.Globals = rec.ValueRepr, rec.Globals
	if r.Globals == nil {
		r.Globals = map[string]json.RawMessage{}
	}
	if r.ExitCode != 0 || rec.Status != 0 {
		if r.ExitCode == 0 {
			r.ExitCode = 1
		}
		r.ValueRepr = nil
		return pdk.FailWith(message(failed(r.ExitCode), r, "nothing was written"), *r)
	}
	written, err := applyWrites(rec.Writes)
	r.Writes = written
	if err != nil {
		return pdk.FailWith(message("Evaluation succeeded (exit code 0), but "+err.Error()+".", r, ""), *r)
	}
	return pdk.OK(message("Evaluation succeeded (exit code 0).", r, ""), *r)
}

// runTimeout is evalTimeout within the host's command timeouts: a
// configuration whose max_timeout is under 5 s must not fail every call.
func runTimeout() (time.Duration, error) {
	l, err := cmdlimits.Load()
	if err != nil {
		return 0, err
	}
	return min(max(evalTimeout, l.Min), l.Max), nil
}

// timedOut is the answer of a run stopped at its time budget (by the
// driver) or its timeout (by the host): nothing is written either way.
func timedOut(r *result, stdout, stderr string) pdk.Result {
	r.TimedOut, r.ExitCode, r.ValueRepr = true, pdk.TimeoutExitCode, nil
	r.Stdout = shellfmt.Chars(stdout, maxStreamChars)
	r.Stderr = shellfmt.Chars(strings.TrimPrefix(strings.TrimRight(stderr, "\n")+"\nExecution timed out.", "\n"), maxStreamChars)
	if r.Globals == nil {
		r.Globals = map[string]json.RawMessage{}
	}
	return pdk.FailWith(message("Evaluation timed out.", r, "nothing was written"), *r)
}

func failed(code int) string {
	return "Evaluation failed (exit code " + strconv.Itoa(code) + ")."
}

// message renders what the model reads: the headline, the value, the
// files written (or why none were), then both streams.
func message(headline string, r *result, noWrites string) string {
	var fields []shellfmt.Field
	if r.ValueRepr != nil {
		fields = append(fields, shellfmt.Field{Name: "Value", Value: *r.ValueRepr})
	}
	if len(r.Writes) > 0 {
		paths := make([]string, len(r.Writes))
		for i, w := range r.Writes {
			paths[i] = "/" + w.Path + " (" + w.Mode + ")"
		}
		fields = append(fields, shellfmt.Field{Name: "Wrote", Value: strings.Join(paths, ", ")})
	} else if noWrites != "" {
		fields = append(fields, shellfmt.Field{Name: "Writes", Value: noWrites})
	}
	return shellfmt.Block(headline, fields, r.Stdout, r.Stderr)
}

// logRun is the event of a run: enough to see what the model did
// without the whole code or its output.
func logRun(c checked, r result) {
	code := []rune(c.code)
	if len(code) > 200 {
		code = code[:200]
	}
	_ = pdk.Log(pdk.LevelInfo, "evaluate_python run", "mode", c.mode, "stdout_chars", len([]rune(r.Stdout)),
		"stderr_chars", len([]rune(r.Stderr)), "writes", len(r.Writes), "exit_code", r.ExitCode,
		"timed_out", r.TimedOut, "code", string(code))
}

var errWrites = errors.New("its writes failed")

func main() {}
