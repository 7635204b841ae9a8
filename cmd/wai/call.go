package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

func init() {
	register(&command{
		name:    "call",
		args:    "[flags] TOOL [JSON | @FILE | -]",
		summary: "call one tool as an agent would and print what the model reads",
		text: `
Calls TOOL with params given as a JSON object on the command line, read from
@FILE, or from standard input with -; no params is {}. The call takes the
agent's path: schema validation, the tool's deadline, limits and policies.

Prints the message the model reads; --json prints the whole result instead
({"ok","message","value","duration_ms","sandboxed"}). Exits 0 for a successful result,
1 for a failed one (a command that exited non-zero, a timeout, an answer
that says why it failed), 2 when wai could not make the call at all (bad
params, a policy refusal, an unavailable backend).

Without --session the session is a throwaway; with --session NAME its
workspace is kept for later calls of the same session (and ` + "`wai exec --session`" + `).

As with wai exec, a status line on a terminal's stderr shows slow steps and
a call running past 2 s, and is erased before the result; -q turns it off.`,
		flags: callFlags,
	})
}

const (
	exitFailedResult = 1
	// maxParamsBytes bounds params read from a file or stdin: a tool's
	// params are a request, not a payload.
	maxParamsBytes = 1 << 20
)

type callJSON struct {
	OK         bool            `json:"ok"`
	Message    string          `json:"message"`
	Value      json.RawMessage `json:"value,omitempty"`
	DurationMS int64           `json:"duration_ms"`
	Sandboxed  bool            `json:"sandboxed"`
}

func callFlags(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
	var (
		kf      kernelFlags
		session string
		asJSON  bool
		quiet   bool
	)
	kf.register(fs)
	fs.StringVar(&session, "session", "", "run in this session `name`, kept for later calls (default: a throwaway session)")
	fs.BoolVar(&asJSON, "json", false, "print the whole result as JSON instead of the model-facing message")
	fs.BoolVar(&quiet, "q", false, "no progress line on stderr (it shows only on a terminal; WAI_PROGRESS=0 turns it off too)")
	return func(ctx context.Context, std stdio, args []string) int {
		// Flags may follow the positional arguments too (wai call TOOL
		// '{}' --json): parse what remains after each positional one.
		var pos []string
		for len(args) > 0 {
			pos = append(pos, args[0])
			if err := fs.Parse(args[1:]); err != nil {
				fs.Usage()
				return exitError
			}
			args = fs.Args()
		}
		if len(pos) == 0 || len(pos) > 2 {
			fmt.Fprintf(std.err, "wai call: want TOOL and at most one params argument, got %d arguments\n", len(pos))
			fs.Usage()
			return exitError
		}
		var src string
		if len(pos) == 2 {
			src = pos[1]
		}
		params, err := readParams(std, src)
		if err != nil {
			return fail(ctx, std.err, err)
		}
		// Logs of -v go through the status line, which steps aside for them.
		st := newStatus(std.err, quiet, std.getenv)
		k, err := kf.open(ctx, std, st, true)
		if err != nil {
			return fail(ctx, std.err, err)
		}
		defer closeKernel(k, std.err)
		// The line is gone before anything else is written: on every
		// return path, and before the result below.
		defer st.end()
		pctx := st.begin(ctx, pos[0])
		if session != "" {
			// Created here so it is kept: Call would make a throwaway one.
			if _, err := k.Session(pctx, session, host.SessionOptions{Keep: true}); err != nil {
				st.end()
				return fail(ctx, std.err, err)
			}
		}
		res, err := k.Call(pctx, session, pos[0], params)
		st.end()
		if err != nil {
			return fail(ctx, std.err, err)
		}
		if asJSON {
			if code := writeJSON(std, callJSON{OK: res.OK, Message: res.Message, Value: res.Value, DurationMS: res.Duration.Milliseconds(), Sandboxed: res.Sandboxed}); code != exitOK {
				return code
			}
		} else {
			fmt.Fprintln(std.out, strings.TrimRight(res.Message, "\n"))
		}
		if !res.OK {
			return exitFailedResult
		}
		return exitOK
	}
}

// readParams returns the params JSON from the argument itself, @FILE, or
// standard input ("-"). Empty means {}. A relative FILE is taken from
// std's directory.
func readParams(std stdio, src string) (json.RawMessage, error) {
	var data []byte
	switch {
	case src == "":
		return json.RawMessage("{}"), nil
	case src == "-":
		b, err := io.ReadAll(io.LimitReader(std.in, maxParamsBytes+1))
		if err != nil {
			return nil, backend.Errorf(backend.ErrInvalid, "call", "", "reading params from standard input: %v", err)
		}
		data = b
	case strings.HasPrefix(src, "@"):
		f, err := os.Open(std.path(src[1:]))
		if err != nil {
			return nil, backend.Errorf(backend.ErrInvalid, "call", src[1:], "reading params: %v", err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxParamsBytes+1))
		if err != nil {
			return nil, backend.Errorf(backend.ErrInvalid, "call", src[1:], "reading params: %v", err)
		}
		data = b
	default:
		data = []byte(src)
	}
	if len(data) > maxParamsBytes {
		return nil, backend.Errorf(backend.ErrInvalid, "call", "", "params are over %d bytes: a tool's params are a request, pass large content through a file in the workspace", maxParamsBytes)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return json.RawMessage("{}"), nil
	}
	// Not checked here: the kernel says what is wrong with params, with
	// the position of a syntax error and what the tool takes, for every
	// caller alike.
	return json.RawMessage(data), nil
}
