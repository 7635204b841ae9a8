// Command wai-demo is the scripted agent of `make demo`: it starts `wai
// serve`, connects to it with the official MCP Go SDK client, and walks
// through wai's main job, printing a transcript: write a small Python
// project, run its tests (one fails), read and fix the code, run them again
// (they pass), try a command the policy blocks, and run away into a
// timeout that kills the runaway process.
//
// usage: wai-demo [-wai PATH] [-- wai serve flags…]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("wai", "bin/wai", "the wai `binary` to serve with")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := demo(ctx, os.Stdout, *bin, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "wai-demo: %v\n", err)
		os.Exit(1)
	}
}

const calc = `def add(a, b):
    return a + b


def mean(xs):
    return sum(xs) / len(xs) + 1
`

const tests = `from calc import add, mean


def test_add():
    assert add(2, 3) == 5


def test_mean():
    got = mean([1, 2, 3])
    assert got == 2, f"mean([1, 2, 3]) is {got}, want 2"
`

// runner is the project's own test runner: the sandbox image may carry
// only a minimal Python (no unittest, no pytest).
const runner = `import sys

import test_calc

names = [n for n in dir(test_calc) if n.startswith("test_")]
failed = 0
for name in names:
    try:
        getattr(test_calc, name)()
        print(f"PASS {name}")
    except AssertionError as e:
        failed += 1
        print(f"FAIL {name}: {e}")
print(f"{len(names)} tests, {failed} failed")
sys.exit(1 if failed else 0)
`

// step is one tool call of the script and what its result must be for the
// demo to be telling the truth.
type step struct {
	say     string
	tool    string
	args    map[string]any
	wantErr bool   // the result must be a tool error
	want    string // the result text must contain this
}

func demo(ctx context.Context, w io.Writer, bin string, serveArgs []string) error {
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve"}, serveArgs...)...)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "wai-demo", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("starting %s serve: %w", bin, err)
	}
	defer cs.Close()

	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	var names []string
	for _, t := range lt.Tools {
		names = append(names, t.Name)
	}
	fmt.Fprintf(w, "== connected to wai serve over MCP (stdio); tools: %s\n\n", strings.Join(names, ", "))

	// -B: no bytecode cache, whose mtime+size check could miss a same-second edit.
	runTests := []string{"python3", "-B", "run_tests.py"}
	steps := []step{
		{say: "Write a small Python project", tool: "write_file", args: map[string]any{"file_path": "calc.py", "content": calc}},
		{tool: "write_file", args: map[string]any{"file_path": "test_calc.py", "content": tests}},
		{tool: "write_file", args: map[string]any{"file_path": "run_tests.py", "content": runner}},
		{say: "Run its tests: one fails", tool: "shell_execute", args: map[string]any{"command": runTests}, wantErr: true, want: "FAIL test_mean"},
		{say: "Read the code to find the bug", tool: "read_file", args: map[string]any{"file_path": "calc.py"}, want: "+ 1"},
		{say: "Fix it", tool: "edit_file", args: map[string]any{"file_path": "calc.py", "old_string": "sum(xs) / len(xs) + 1", "new_string": "sum(xs) / len(xs)"}},
		{say: "Run the tests again: they pass", tool: "shell_execute", args: map[string]any{"command": runTests}, want: "2 tests, 0 failed"},
		{say: "Try something destructive: the policy blocks it, with its reason", tool: "shell_execute", args: map[string]any{"command": []string{"rm", "-rf", "/"}}, wantErr: true, want: "rm"},
		{say: "Run away (a background sleep and a busy loop): the timeout kills the whole tree", tool: "shell_execute",
			args: map[string]any{"command": []string{"sh", "-c", "sleep 297 & while :; do :; done"}, "timeout_seconds": 2}, wantErr: true, want: "124"},
		{say: "Nothing of it survived", tool: "shell_execute", args: map[string]any{"command": []string{"sh", "-c", "ps -eo args | grep -c '[s]leep 297' || true"}}, want: "STDOUT:\n0\n"},
	}
	for _, s := range steps {
		if s.say != "" {
			fmt.Fprintf(w, "## %s\n", s.say)
		}
		if err := run(ctx, w, cs, s); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "== done: the session's workspace is removed as the client disconnects\n")
	return nil
}

// marshal shows JSON as a person reads it: no \u0026 for &.
func marshal(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

func run(ctx context.Context, w io.Writer, cs *mcp.ClientSession, s step) error {
	shown := marshal(s.args)
	if c, ok := s.args["content"].(string); ok {
		// Show the file once, readably, rather than as one escaped line.
		short := map[string]any{}
		for k, v := range s.args {
			short[k] = v
		}
		short["content"] = fmt.Sprintf("<%d lines>", strings.Count(c, "\n"))
		shown = marshal(short) + "\n" + indent(c, "   | ")
	}
	fmt.Fprintf(w, "→ %s %s\n", s.tool, shown)
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: s.tool, Arguments: s.args})
	if err != nil {
		return fmt.Errorf("%s: %w", s.tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	mark := "ok"
	if res.IsError {
		mark = "tool error"
	}
	fmt.Fprintf(w, "← %s (%s)\n%s\n\n", mark, time.Since(start).Round(10*time.Millisecond), indent(strings.TrimRight(b.String(), "\n"), "   "))
	if res.IsError != s.wantErr || !strings.Contains(b.String(), s.want) {
		return fmt.Errorf("%s did not go as the demo expects (want error=%v and %q in the result)", s.tool, s.wantErr, s.want)
	}
	return nil
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
