// Package backendtest holds the checks that tests of backends and of
// their parts share, so each reads a backend.Error the same way, and the
// calls those tests make on every backend alike.
package backendtest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// WantKind fails t unless err is of kind (one of backend's Err* sentinels)
// and, when contains is not empty, says contains.
func WantKind(t testing.TB, err, kind error, contains string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v: want kind %v", err, kind)
	}
	if contains != "" && !strings.Contains(err.Error(), contains) {
		t.Fatalf("error %q does not say %q", err, contains)
	}
}

// ExampleBlock returns the body of the first commented [backends.NAME]
// block of an example configuration (wai.example.toml): the lines after
// its header, their "#   " taken off, up to the next table or uncommented
// line. A backend's tests check that the block names every key of its
// config with the default; later blocks of the same table are examples
// of nested values.
func ExampleBlock(data []byte, name string) []string {
	var block []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		body, commented := strings.CutPrefix(line, "#   ")
		switch {
		case !in:
			in = commented && body == "[backends."+name+"]"
		case !commented || strings.HasPrefix(body, "["):
			return block
		default:
			block = append(block, body)
		}
	}
	return block
}

// Execute runs req on sh and fails t when it could not run at all; a
// command that ran and failed is the result's to say.
func Execute(t testing.TB, sh backend.Shell, req backend.ExecRequest) backend.ExecResult {
	t.Helper()
	res, err := sh.Execute(context.Background(), req)
	if err != nil {
		t.Fatalf("Execute(%q): %v", req.Command(), err)
	}
	return res
}

// Sessions is what l lists, by session name.
func Sessions(t testing.TB, l backend.SessionLister) map[string]backend.SessionInfo {
	t.Helper()
	ls, err := l.ListSessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]backend.SessionInfo{}
	for _, s := range ls {
		out[s.Session] = s
	}
	return out
}

// Progress records the progress reports made under its Context, for tests
// of what a slow step tells the user (MCP progress, the CLI's status line).
type Progress struct {
	mu  sync.Mutex
	got []backend.Progress
}

// Context is parent with p as its progress reporter.
func (p *Progress) Context(parent context.Context) context.Context {
	return backend.WithProgress(parent, func(r backend.Progress) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.got = append(p.got, r)
	})
}

// Reports is every report so far, in order.
func (p *Progress) Reports() []backend.Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.got)
}

// Stages is the stage of every report so far that starts one (not Done).
func (p *Progress) Stages() []string {
	var out []string
	for _, r := range p.Reports() {
		if !r.Done {
			out = append(out, r.Stage)
		}
	}
	return out
}
