package backendtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// recorder is a testing.TB that records a failure instead of ending the
// test, so WantKind's failures can be checked.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func (r *recorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...) }

func TestWantKind(t *testing.T) {
	err := backend.Errorf(backend.ErrNotFound, "fs.read", "a.txt", "no such file")
	for _, c := range []struct {
		kind     error
		contains string
		fails    bool
	}{
		{backend.ErrNotFound, "", false},
		{backend.ErrNotFound, "no such file", false},
		{backend.ErrInvalid, "", true},
		{backend.ErrNotFound, "permission", true},
	} {
		r := &recorder{TB: t}
		WantKind(r, err, c.kind, c.contains)
		if (r.failed != "") != c.fails {
			t.Errorf("WantKind(%v, %q): failed %q, want failing %v", c.kind, c.contains, r.failed, c.fails)
		}
	}
	r := &recorder{TB: t}
	WantKind(r, nil, backend.ErrNotFound, "")
	if r.failed == "" {
		t.Error("WantKind accepted a nil error")
	}
}

func TestExampleBlock(t *testing.T) {
	data := []byte(`[limits]
#   [backends.other]
#   x = 1
#
#   [backends.mock]
#   a = 1   # the first
#   b = "two"
#   [backends.mock.nested]
#   c = 3

#   [backends.mock]
#   d = 4
`)
	got := strings.Join(ExampleBlock(data, "mock"), "|")
	if want := `a = 1   # the first|b = "two"`; got != want {
		t.Errorf("ExampleBlock(mock) = %q, want %q", got, want)
	}
	if got := ExampleBlock(data, "absent"); len(got) != 0 {
		t.Errorf("ExampleBlock(absent) = %q, want nothing", got)
	}
}

// shell answers Execute with res or err; the rest of backend.Shell is not
// called.
type shell struct {
	backend.Shell
	res backend.ExecResult
	err error
}

func (s shell) Execute(context.Context, backend.ExecRequest) (backend.ExecResult, error) {
	return s.res, s.err
}

func TestExecute(t *testing.T) {
	req := backend.ExecRequest{Shell: "false"}
	r := &recorder{TB: t}
	if got := Execute(r, shell{res: backend.ExecResult{ExitCode: 1}}, req); got.ExitCode != 1 || r.failed != "" {
		t.Errorf("a command that ran and failed: %+v, failure %q", got, r.failed)
	}
	r = &recorder{TB: t}
	Execute(r, shell{err: backend.Errorf(backend.ErrUnavailable, "exec", "", "closed")}, req)
	if !strings.Contains(r.failed, "false") || !strings.Contains(r.failed, "closed") {
		t.Errorf("a command that could not run: failure %q, want the command and the error", r.failed)
	}
}

// lister lists ls, or fails with err.
type lister struct {
	ls  []backend.SessionInfo
	err error
}

func (l lister) ListSessions(context.Context) ([]backend.SessionInfo, error) { return l.ls, l.err }

func TestSessions(t *testing.T) {
	r := &recorder{TB: t}
	got := Sessions(r, lister{ls: []backend.SessionInfo{{Session: "a", Size: 1}, {Session: "b", Size: 2}}})
	if len(got) != 2 || got["a"].Size != 1 || got["b"].Size != 2 || r.failed != "" {
		t.Errorf("Sessions = %+v, failure %q", got, r.failed)
	}
	r = &recorder{TB: t}
	Sessions(r, lister{err: errors.New("no service")})
	if !strings.Contains(r.failed, "no service") {
		t.Errorf("a failed list: failure %q, want the error", r.failed)
	}
}

func TestProgress(t *testing.T) {
	var p Progress
	ctx := p.Context(context.Background())
	backend.ReportProgress(ctx, backend.Progress{Stage: "pulling"})
	backend.ReportProgress(ctx, backend.Progress{Stage: "pulling", Done: true})
	backend.ReportProgress(ctx, backend.Progress{Stage: "starting"})
	want := []backend.Progress{{Stage: "pulling"}, {Stage: "pulling", Done: true}, {Stage: "starting"}}
	if got := p.Reports(); !slices.Equal(got, want) {
		t.Errorf("Reports = %+v, want %+v", got, want)
	}
	if got := p.Stages(); !slices.Equal(got, []string{"pulling", "starting"}) {
		t.Errorf("Stages = %q, want the two started", got)
	}
}
