package host_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

// twoKernels are two wai processes on one state directory, as far as
// session records go.
func twoKernels(t *testing.T) (*host.Kernel, *host.Kernel, string) {
	t.Helper()
	state := t.TempDir()
	open := func() *host.Kernel {
		cfg := host.DefaultConfig()
		cfg.Backend = "host"
		cfg.StateDir = state
		cfg.BundledTools = []string{}
		return startKernel(t, cfg)
	}
	return open(), open(), state
}

// The kernel's admin calls see and touch one user's sessions only, never
// a held one, and take a removed session's read record with it.
func TestKernelAdminKeepsUsersApart(t *testing.T) {
	k1, k2, state := twoKernels(t)
	ctx := t.Context()
	var held *host.Session
	for _, user := range []string{"", "alice", "bob"} {
		s, err := k1.Session(ctx, "p", host.SessionOptions{User: user, Keep: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.FS().Write(ctx, backend.WriteRequest{Path: "f", Content: user}); err != nil {
			t.Fatal(err)
		}
		if user == "bob" {
			held = s
			continue
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for scope, want := range map[host.AdminScope]int{{}: 1, {User: "alice"}: 1, {User: "carol"}: 0, {AllUsers: true}: 3} {
		ls, errs := k2.ListSessions(ctx, scope)
		if len(errs) > 0 || len(ls) != want {
			t.Errorf("ListSessions(%+v) = %+v, %v; want %d sessions", scope, ls, errs, want)
		}
		for _, e := range ls {
			if !scope.AllUsers && (e.User != scope.User || e.Name != "p") {
				t.Errorf("ListSessions(%+v) lists %+v", scope, e)
			}
		}
	}
	if _, err := k2.RemoveSession(ctx, host.AdminScope{User: "carol"}, "p"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("carol removing p: %v, want ErrNotFound", err)
	}
	if _, err := k2.RemoveSession(ctx, host.AdminScope{}, backend.SessionKey("alice", "p")); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("removing alice's p by its key without a user: %v, want ErrInvalid", err)
	}
	if _, err := k2.RemoveSession(ctx, host.AdminScope{User: "bob"}, "p"); !errors.Is(err, backend.ErrPermission) {
		t.Errorf("removing bob's p while k1 holds it: %v, want ErrPermission", err)
	}
	if _, err := held.FS().Stat(ctx, "f"); err != nil {
		t.Errorf("a refused removal touched bob's files: %v", err)
	}
	reads := filepath.Join(state, "reads", "host", "alice", backend.SessionKey("alice", "p")+".json")
	if _, err := os.Stat(reads); err != nil {
		t.Fatalf("alice's kept session has no read record at %s: %v", reads, err)
	}
	e, err := k2.RemoveSession(ctx, host.AdminScope{User: "alice"}, "p")
	if err != nil || e.Backend != "host" || e.User != "alice" {
		t.Fatalf("alice removing her p: %+v, %v", e, err)
	}
	if _, err := os.Stat(e.Workspace); !os.IsNotExist(err) {
		t.Errorf("alice's workspace survived: %v", err)
	}
	if _, err := os.Stat(reads); !os.IsNotExist(err) {
		t.Errorf("alice's read record survived her session: %v", err)
	}
	if ls, _ := k2.ListSessions(ctx, host.AdminScope{}); len(ls) != 1 {
		t.Errorf("removing alice's p touched the user-less p: %+v", ls)
	}
	reps, errs := k2.CollectGarbage(ctx, host.AdminScope{User: "bob"}, true)
	if len(errs) > 0 || len(reps) != 1 || len(reps[0].Removed) != 0 {
		t.Errorf("gc --all of bob's sessions while k1 holds p: %+v, %v; want nothing removed", reps, errs)
	}
	reps, errs = k2.CollectGarbage(ctx, host.AdminScope{}, true)
	if len(errs) > 0 || len(reps) != 1 || len(reps[0].Removed) != 1 || reps[0].Removed[0].Session != "p" {
		t.Errorf("gc --all of the user-less sessions: %+v, %v; want the user-less p", reps, errs)
	}
}
