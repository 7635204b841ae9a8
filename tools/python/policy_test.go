package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/internal/tooltest"
	"github.com/wai-dev/wai/plugins/mock"
)

// denyProtected refuses writes under protected/ and records what it saw.
type denyProtected struct {
	mu   sync.Mutex
	seen []host.CheckRequest
}

func (p *denyProtected) Name() string { return "deny-protected" }

func (p *denyProtected) Check(_ context.Context, req host.CheckRequest) (host.Decision, error) {
	p.mu.Lock()
	p.seen = append(p.seen, req)
	p.mu.Unlock()
	if req.Action == "fs.write" && strings.HasPrefix(req.Path, "protected/") {
		return host.Decision{Reason: "protected/ is read-only here"}, nil
	}
	return host.Decision{Allow: true}, nil
}

// writes are the writes it judged in session, one backend's alone: the
// backends' kernels share this policy and run in parallel.
func (p *denyProtected) writes(session string) []host.CheckRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []host.CheckRequest
	for _, r := range p.seen {
		if r.Action == "fs.write" && r.Session == session {
			out = append(out, r)
		}
	}
	return out
}

// TestWritesObeyPolicies: the writes are the host's filesystem writes, so
// policies judge them, naming the tool; a refused one stops the rest and
// the result says what was written.
func TestWritesObeyPolicies(t *testing.T) {
	py := &fakePython{t: t, answers: map[string]canned{}}
	pol := &denyProtected{}
	var backends []tooltest.Backend
	for _, b := range backendsWithFake(t, py, nil) {
		setup := b.Setup
		b.Setup = func(t *testing.T, cfg *host.Config) (*mock.Backend, []host.Option) {
			m, opts := setup(t, cfg)
			return m, append(opts, host.WithPolicy(pol))
		}
		backends = append(backends, b)
	}
	tooltest.RunOn(t, backends, []string{"tools/python"}, nil, func(t *testing.T, te *tooltest.Env) {
		e := pyEnv{te, py}
		if e.Backend.Real && !hasPython(t, te) {
			if os.Getenv("CI") == "true" {
				t.Fatal("python3 is required on CI: evaluate_python runs it")
			}
			t.Skip("python3 is not on this machine's PATH")
		}
		s := e.session()
		e.fake("0", canned{rec: &record{ValueRepr: ptr("0"), Globals: map[string]json.RawMessage{},
			Writes: []writeSpec{{Path: "free.txt", Content: "f", Mode: "create"}, {Path: "protected/x.txt", Content: "p", Mode: "create"},
				{Path: "never.txt", Content: "n", Mode: "create"}}}})
		res, r := e.mustCall(t, s, map[string]any{"code": "0", "writes": []any{
			map[string]any{"path": "free.txt", "content": "f"}, map[string]any{"path": "protected/x.txt", "content": "p"},
			map[string]any{"path": "never.txt", "content": "n"}}})
		if res.OK || len(r.Writes) != 1 || r.Writes[0].Path != "free.txt" ||
			!strings.Contains(res.Message, "protected/ is read-only here") || !strings.Contains(res.Message, "1 of 3 writes were made") {
			t.Fatalf("%q %+v", res.Message, r)
		}
		if got, ok := e.file(t, s, "free.txt"); !ok || got != "f" {
			t.Fatalf("free.txt: %q %v", got, ok)
		}
		noFiles(t, e, s, "protected/x.txt", "never.txt")
		w := pol.writes(s)
		if len(w) != 2 || w[0].Tool != "evaluate_python" || w[1].Path != "protected/x.txt" {
			t.Fatalf("the policy saw %+v", w)
		}
	})
}
