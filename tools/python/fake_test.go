package main

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/json"
	"sync"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/tooltest"
	"github.com/wai-dev/wai/plugins/mock"
)

// canned is what the fake python of the mock backend answers for one
// code: what the driver would print and report. Commands do not run on
// the mock, so its cases test validation, the record's checks and the
// application of writes against results written by hand.
type canned struct {
	printed, stderr string
	rec             *record // nil: no record at all
	exit            int
	timedOut        bool
	// tamper, if set, rewrites the whole stdout (forged or cut records).
	tamper func(stdout, marker string) string
}

// fakePython answers python3 runs of the mock from a table keyed by code;
// a code missing from it fails the test.
type fakePython struct {
	t       testing.TB
	mu      sync.Mutex
	answers map[string]canned
	inputs  []driverInput // every driver input received, in order
}

func (f *fakePython) set(code string, c canned) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[code] = c
}

func (f *fakePython) runs() []driverInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]driverInput(nil), f.inputs...)
}

// lastRun is the last driver input received for code: cases that run in
// parallel interleave their runs.
func (f *fakePython) lastRun(code string) driverInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.inputs) - 1; i >= 0; i-- {
		if f.inputs[i].Code == code {
			return f.inputs[i]
		}
	}
	f.t.Errorf("the fake python never ran %q", code)
	return driverInput{}
}

func (f *fakePython) answer(req backend.ExecRequest) (backend.ExecResult, bool) {
	if len(req.Argv) != 3 || req.Argv[0] != "python3" || req.Argv[2] != bootstrap {
		return backend.ExecResult{}, false
	}
	var in driverInput
	if err := json.Unmarshal([]byte(req.Stdin), &in); err != nil {
		f.t.Errorf("the driver's stdin is not its input document: %v", err)
		return backend.ExecResult{ExitCode: 1}, true
	}
	f.mu.Lock()
	f.inputs = append(f.inputs, in)
	c, ok := f.answers[in.Code]
	f.mu.Unlock()
	if !ok {
		f.t.Errorf("the fake python has no answer for code %q", in.Code)
		return backend.ExecResult{ExitCode: 1}, true
	}
	stdout := c.printed
	if c.rec != nil {
		data, _ := json.Marshal(c.rec)
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		_, _ = w.Write(data)
		_ = w.Close()
		stdout += in.Marker + base64.StdEncoding.EncodeToString(z.Bytes()) + "\n"
	}
	if c.tamper != nil {
		stdout = c.tamper(stdout, in.Marker)
	}
	res := backend.ExecResult{Stdout: stdout, Stderr: c.stderr, ExitCode: c.exit, TimedOut: c.timedOut}
	if c.timedOut {
		res.ExitCode = pdkTimeoutExit
	}
	return res, true
}

const pdkTimeoutExit = 124

// The wrappers route python3 runs to the fake and everything else
// (filesystem included) to the mock.
type fakeBackend struct {
	*mock.Backend
	py *fakePython
}

func (b fakeBackend) Open(ctx context.Context, spec backend.WorkspaceSpec) (backend.Workspace, error) {
	ws, err := b.Backend.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	return fakeWorkspace{ws, b.py}, nil
}

type fakeWorkspace struct {
	backend.Workspace
	py *fakePython
}

func (w fakeWorkspace) Shell() backend.Shell { return fakeShell{w.Workspace.Shell(), w.py} }

type fakeShell struct {
	backend.Shell
	py *fakePython
}

func (s fakeShell) Execute(ctx context.Context, req backend.ExecRequest) (backend.ExecResult, error) {
	if res, ok := s.py.answer(req); ok {
		res.Backend, res.Command = "mock", req.Argv
		return res, nil
	}
	return s.Shell.Execute(ctx, req)
}

// backendsWithFake are tooltest's backends with the mock's python faked;
// files seeds every mock workspace.
func backendsWithFake(t *testing.T, py *fakePython, files map[string]string) []tooltest.Backend {
	out := make([]tooltest.Backend, 0, len(tooltest.Backends))
	for _, b := range tooltest.Backends {
		if b.Name == "mock" {
			b.Setup = func(_ *testing.T, cfg *host.Config) (*mock.Backend, []host.Option) {
				m := mock.New(mock.Options{Files: files, Which: map[string]string{"python3": "/usr/bin/python3", "sh": "/bin/sh"}})
				cfg.Backend = "mock"
				return m, []host.Option{host.WithBackend(fakeBackend{m, py})}
			}
		}
		out = append(out, b)
	}
	return out
}

// Interface guards
var (
	_ backend.Backend   = fakeBackend{}
	_ backend.Workspace = fakeWorkspace{}
	_ backend.Shell     = fakeShell{}
)
