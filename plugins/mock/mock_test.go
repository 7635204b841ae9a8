package mock_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/plugins/mock"
)

func open(t *testing.T, b *mock.Backend, session string) *mock.Workspace {
	t.Helper()
	ws, err := b.Open(t.Context(), backend.WorkspaceSpec{Session: session})
	if err != nil {
		t.Fatalf("Open(%s): %v", session, err)
	}
	return ws.(*mock.Workspace)
}

func execute(t *testing.T, sh backend.Shell, req backend.ExecRequest) backend.ExecResult {
	t.Helper()
	res, err := sh.Execute(t.Context(), req)
	if err != nil {
		t.Fatalf("Execute(%+v): %v", req, err)
	}
	return res
}

func TestFirstRegisteredMatchWins(t *testing.T) {
	ws := open(t, mock.New(mock.Options{}), "s")
	sh := ws.MockShell()
	sh.AddResponse("make", backend.ExecResult{Stdout: "make"})
	sh.AddResponse("make build", backend.ExecResult{Stdout: "make build"})
	sh.AddResponse("pytest", backend.ExecResult{ExitCode: 1, Stdout: "failed"})
	for _, c := range []struct {
		req  backend.ExecRequest
		want string
	}{
		{backend.ExecRequest{Argv: []string{"make", "build"}}, "make"},
		{backend.ExecRequest{Shell: "cd src && make build"}, "make"},
		{backend.ExecRequest{Argv: []string{"python3", "-m", "pytest", "-q"}}, "failed"},
		{backend.ExecRequest{Argv: []string{"ls"}}, ""},
	} {
		if got := execute(t, sh, c.req).Stdout; got != c.want {
			t.Errorf("Execute(%v) stdout %q, want %q", c.req.Command(), got, c.want)
		}
	}
	res, err := sh.ExecuteScript(t.Context(), backend.ScriptRequest{Script: "import os\nos.system('pytest')\n", Interpreter: "/usr/bin/python3"})
	if err != nil || res.ExitCode != 1 {
		t.Errorf("ExecuteScript mentioning pytest = %+v, %v; want the pytest response", res, err)
	}
}

func TestArgvMatchesJoinedWithSpaces(t *testing.T) {
	ws := open(t, mock.New(mock.Options{}), "s")
	ws.MockShell().AddResponse("git commit -m", backend.ExecResult{Stdout: "committed"})
	if got := execute(t, ws.Shell(), backend.ExecRequest{Argv: []string{"git", "commit", "-m", "msg"}}).Stdout; got != "committed" {
		t.Errorf("argv git commit -m msg: stdout %q, want the response for \"git commit -m\"", got)
	}
	if got := execute(t, ws.Shell(), backend.ExecRequest{Argv: []string{"git", "commit-tree"}}).Stdout; got != "" {
		t.Errorf("argv git commit-tree matched %q", got)
	}
}

func TestResponseOrderAcrossLevels(t *testing.T) {
	b := mock.New(mock.Options{
		Responses: []mock.Response{{Pattern: "deploy", Result: backend.ExecResult{Stdout: "backend deploy"}}},
		Default:   &backend.ExecResult{ExitCode: 9, Stdout: "backend default"},
	})
	b.AddResponse("lint", backend.ExecResult{Stdout: "backend lint"})
	ws := open(t, b, "s")
	sh := ws.MockShell()
	if got := execute(t, sh, backend.ExecRequest{Shell: "other"}); got.ExitCode != 9 || got.Stdout != "backend default" {
		t.Errorf("unmatched command with only a backend default: %+v", got)
	}
	sh.AddResponse("lint", backend.ExecResult{Stdout: "workspace lint"})
	sh.SetDefault(backend.ExecResult{ExitCode: 3, Stdout: "workspace default"})
	for cmd, want := range map[string]string{
		"lint ./...": "workspace lint",    // the workspace's response first
		"deploy now": "backend deploy",    // a backend response beats the workspace default
		"other":      "workspace default", // then the workspace default
	} {
		if got := execute(t, sh, backend.ExecRequest{Shell: cmd}).Stdout; got != want {
			t.Errorf("%q answered %q, want %q", cmd, got, want)
		}
	}
	if got := execute(t, open(t, b, "other-session").Shell(), backend.ExecRequest{Shell: "lint"}).Stdout; got != "backend lint" {
		t.Errorf("another workspace answered %q: responses of one workspace leaked into another", got)
	}
}

func TestDefaultIsSuccessWithNoOutput(t *testing.T) {
	ws := open(t, mock.New(mock.Options{}), "s")
	res := execute(t, ws.Shell(), backend.ExecRequest{Argv: []string{"anything"}})
	if res.ExitCode != 0 || res.Stdout != "" || res.Stderr != "" || !res.Success() {
		t.Errorf("default result = %+v, want exit 0 and no output", res)
	}
}

func TestResultStamped(t *testing.T) {
	l := backend.DefaultLimits()
	l.MaxOutputBytes = 100
	b := mock.New(mock.Options{Limits: l, Files: map[string]string{"sub/keep": ""}})
	ws := open(t, b, "s")
	sh := ws.MockShell()
	sh.AddResponse("pretend", backend.ExecResult{Stdout: "x", Backend: "podman", Sandboxed: false})
	sh.AddResponse("big", backend.ExecResult{Stdout: strings.Repeat("a", 500) + "END"})
	sh.AddResponse("fixed", backend.ExecResult{Command: []string{"as", "canned"}, Cwd: "/elsewhere"})

	res := execute(t, sh, backend.ExecRequest{Argv: []string{"pretend"}, Cwd: "sub"})
	if res.Backend != "mock" || !res.Sandboxed {
		t.Errorf("canned result claiming podman came back as backend %q sandboxed %v; want mock, sandboxed", res.Backend, res.Sandboxed)
	}
	if !slices.Equal(res.Command, []string{"pretend"}) || res.Cwd != "/workspace/sub" {
		t.Errorf("result command %q cwd %q, want the request's [pretend] and /workspace/sub", res.Command, res.Cwd)
	}
	res = execute(t, sh, backend.ExecRequest{Shell: "big"})
	if !res.Truncated || !strings.Contains(res.Stdout, backend.TruncatedMarker) || !strings.HasSuffix(res.Stdout, "END") || len(res.Stdout) > 160 {
		t.Errorf("500-byte canned stdout at a 100-byte limit: truncated %v, %d bytes %q", res.Truncated, len(res.Stdout), res.Stdout)
	}
	if !slices.Equal(res.Command, []string{"/bin/sh", "-c", "big"}) {
		t.Errorf("shell-string result command %q, want /bin/sh -c big", res.Command)
	}
	res = execute(t, sh, backend.ExecRequest{Shell: "big", DiscardOutput: true})
	if res.Stdout != "" || res.Stderr != "" {
		t.Errorf("capture off: stdout %q stderr %q, want none", res.Stdout, res.Stderr)
	}
	res = execute(t, sh, backend.ExecRequest{Shell: "fixed"})
	if !slices.Equal(res.Command, []string{"as", "canned"}) || res.Cwd != "/elsewhere" {
		t.Errorf("canned command and cwd were replaced: %q %q", res.Command, res.Cwd)
	}
	res.Command[0] = "changed"
	if again := execute(t, sh, backend.ExecRequest{Shell: "fixed"}); again.Command[0] != "as" {
		t.Errorf("changing a returned result changed the canned one")
	}
}

func TestCallsRecordedInOrder(t *testing.T) {
	b := mock.New(mock.Options{Which: map[string]string{"make": "/usr/bin/make"}})
	ws := open(t, b, "s1")
	sh := ws.MockShell()
	ctx := t.Context()
	argv := []string{"make", "build"}
	execute(t, sh, backend.ExecRequest{Argv: argv, Env: map[string]string{"K": "v"}, Stdin: "in"})
	argv[0] = "mutated" // the record must not change with the caller's slice
	if _, err := sh.ExecuteScript(ctx, backend.ScriptRequest{Script: "echo hi\n"}); err != nil {
		t.Fatal(err)
	}
	if w, err := sh.Which(ctx, "make"); err != nil || w.Path != "/usr/bin/make" {
		t.Errorf("Which(make) = %+v, %v", w, err)
	}
	if _, err := sh.Env(ctx); err != nil {
		t.Fatal(err)
	}
	_, rejected := sh.Execute(ctx, backend.ExecRequest{Argv: []string{"x"}, Timeout: -1})
	if !errors.Is(rejected, backend.ErrInvalid) {
		t.Fatalf("negative timeout: %v, want ErrInvalid", rejected)
	}
	execute(t, open(t, b, "s2").Shell(), backend.ExecRequest{Shell: "other session"})

	calls := sh.Calls()
	kinds := make([]mock.CallKind, len(calls))
	for i, c := range calls {
		kinds[i] = c.Kind
	}
	want := []mock.CallKind{mock.CallExecute, mock.CallScript, mock.CallWhich, mock.CallEnv, mock.CallExecute}
	if !slices.Equal(kinds, want) {
		t.Fatalf("workspace calls %v, want %v", kinds, want)
	}
	c := calls[0]
	if !slices.Equal(c.Exec.Argv, []string{"make", "build"}) || c.Exec.Env["K"] != "v" || c.Exec.Stdin != "in" || c.Session != "s1" || c.Err != nil {
		t.Errorf("first call recorded as %+v", c)
	}
	if calls[1].Script.Script != "echo hi\n" || calls[2].Command != "make" {
		t.Errorf("script and which calls recorded as %+v and %+v", calls[1], calls[2])
	}
	if !errors.Is(calls[4].Err, backend.ErrInvalid) {
		t.Errorf("the refused call is recorded with error %v, want its ErrInvalid", calls[4].Err)
	}
	all := b.Calls()
	if len(all) != 6 || all[5].Session != "s2" || all[5].Exec.Shell != "other session" {
		t.Errorf("backend calls: %d, last %+v; want 6, the last from s2", len(all), all[len(all)-1])
	}
	calls[0].Exec.Argv[0] = "changed"
	if sh.Calls()[0].Exec.Argv[0] != "make" {
		t.Errorf("changing returned calls changed the record")
	}
}

func TestRequestsValidated(t *testing.T) {
	ws := open(t, mock.New(mock.Options{Files: map[string]string{"f.txt": "x"}}), "s")
	sh := ws.Shell()
	for name, req := range map[string]backend.ExecRequest{
		"empty":       {},
		"both":        {Argv: []string{"a"}, Shell: "a"},
		"long":        {Shell: strings.Repeat("x", 5000)},
		"bad env":     {Shell: "a", Env: map[string]string{"1X": "y"}},
		"timeout":     {Shell: "a", Timeout: 700e9},
		"missing cwd": {Shell: "a", Cwd: "nope"},
		"file cwd":    {Shell: "a", Cwd: "f.txt"},
	} {
		if _, err := sh.Execute(t.Context(), req); !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", name, err)
		}
	}
	if _, err := sh.Which(t.Context(), ""); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("Which(\"\"): %v, want ErrInvalid", err)
	}
}

func TestConfigThroughRegistry(t *testing.T) {
	cfg := json.RawMessage(`{
		"responses": [{"pattern": "make build", "exit_code": 0, "stdout": "ok", "duration_ms": 1500}],
		"default": {"exit_code": 1, "stderr": "unexpected"},
		"env": {"HOME": "/home/agent"},
		"which": {"make": "/usr/bin/make"},
		"files": {"src/main.go": "package main\n"}
	}`)
	b, err := backend.Open(t.Context(), "mock", backend.Options{Config: cfg})
	if err != nil {
		t.Fatalf("backend.Open(mock): %v", err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	ws, err := b.Open(t.Context(), backend.WorkspaceSpec{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	sh := ws.Shell()
	if res := execute(t, sh, backend.ExecRequest{Argv: []string{"make", "build"}, Cwd: "src"}); res.Stdout != "ok" || res.Duration.Milliseconds() != 1500 {
		t.Errorf("configured response = %+v", res)
	}
	if res := execute(t, sh, backend.ExecRequest{Argv: []string{"rm", "-rf", "x"}}); res.ExitCode != 1 || res.Stderr != "unexpected" {
		t.Errorf("configured default = %+v", res)
	}
	snap, err := sh.Env(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if home, _ := snap.Get("HOME"); home != "/home/agent" {
		t.Errorf("configured HOME = %q", home)
	}
	if path, _ := snap.Get("PATH"); path != mock.DefaultPath {
		t.Errorf("PATH = %q, want the default added to a configured env without one", path)
	}
	if w, _ := sh.Which(t.Context(), "make"); w.Path != "/usr/bin/make" {
		t.Errorf("configured which = %+v", w)
	}
	if res, err := ws.FS().Read(t.Context(), backend.ReadRequest{Path: "src/main.go"}); err != nil || res.Lines[0] != "package main" {
		t.Errorf("configured file = %+v, %v", res, err)
	}
}

func TestConfigStrict(t *testing.T) {
	for _, cfg := range []string{
		`{"responses": [{"pattern": "x", "exitcode": 1}]}`,
		`{"defaults": {}}`,
		`{"env": {"1BAD": "x"}}`,
		`{"responses": "not a list"}`,
	} {
		_, err := backend.Open(t.Context(), "mock", backend.Options{Config: json.RawMessage(cfg)})
		if !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("config %s: error %v, want ErrInvalid", cfg, err)
		}
	}
}

func TestWorkspaceLifecycle(t *testing.T) {
	b := mock.New(mock.Options{})
	ctx := t.Context()
	write := func(ws backend.Workspace) {
		t.Helper()
		if _, err := ws.FS().Write(ctx, backend.WriteRequest{Path: "f.txt", Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	has := func(ws backend.Workspace) bool {
		_, err := ws.FS().Stat(ctx, "f.txt")
		return err == nil
	}

	ws := open(t, b, "s")
	write(ws)
	if again := open(t, b, "s"); again != ws {
		t.Errorf("opening an open session gave another workspace")
	}
	if err := ws.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Shell().Execute(ctx, backend.ExecRequest{Shell: "x"}); !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("Execute on a closed workspace: %v, want ErrUnavailable", err)
	}
	if _, err := ws.FS().Stat(ctx, "f.txt"); !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("Stat on a closed workspace: %v, want ErrUnavailable", err)
	}
	if has(open(t, b, "s")) {
		t.Errorf("a session closed without Keep kept its files")
	}

	kept, err := b.Open(ctx, backend.WorkspaceSpec{Session: "k", Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	write(kept)
	if err := kept.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !has(open(t, b, "k")) {
		t.Errorf("a session closed with Keep lost its files")
	}

	if _, err := b.Open(ctx, backend.WorkspaceSpec{Session: "../x"}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("bad session name: %v, want ErrInvalid", err)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(ctx, backend.WorkspaceSpec{Session: "s"}); !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("Open after Close: %v, want ErrUnavailable", err)
	}
}

func TestInvalidLimitsSurfaceOnOpen(t *testing.T) {
	l := backend.DefaultLimits()
	l.MaxResults = 0
	_, err := mock.New(mock.Options{Limits: l}).Open(t.Context(), backend.WorkspaceSpec{Session: "s"})
	if !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("Open with MaxResults 0: %v, want ErrInvalid", err)
	}
}

func TestConcurrentCallsAllRecorded(t *testing.T) {
	b := mock.New(mock.Options{})
	ws := open(t, b, "s")
	sh := ws.MockShell()
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sh.AddResponse(fmt.Sprintf("cmd-%d.", i), backend.ExecResult{Stdout: fmt.Sprint(i)})
			res, err := sh.Execute(t.Context(), backend.ExecRequest{Argv: []string{fmt.Sprintf("cmd-%d.", i)}})
			if err != nil || res.Stdout != fmt.Sprint(i) {
				t.Errorf("call %d: %+v, %v", i, res, err)
			}
		})
	}
	wg.Wait()
	if got := len(sh.Calls()); got != n {
		t.Errorf("%d calls recorded, want %d", got, n)
	}
	if got := len(b.Calls()); got != n {
		t.Errorf("%d calls recorded by the backend, want %d", got, n)
	}
}
