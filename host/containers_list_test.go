package host

import (
	"context"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend/backendtest"
)

// A model that reconnects gets a new session: list must show the
// persistent containers its earlier session made (status and exec reach
// them by name already), marked as such, and never another user's nor an
// earlier session's temporary ones.
func TestContainersListShowsEarlierPersistent(t *testing.T) {
	t.Parallel()
	k, _ := containersKernel(t, nil)
	ctx := context.Background()
	open := func(name, user string) *Session {
		s, err := k.Session(ctx, name, SessionOptions{User: user})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first, later, bob := open("first", "alice"), open("later", "alice"), open("first", "bob")
	for _, c := range []struct {
		s          *Session
		name       string
		persistent bool
	}{{first, "keep", true}, {first, "temp", false}, {later, "mine", false}, {bob, "bobs", true}} {
		f := false
		if _, err := c.s.Containers(ctx, ContainerRequest{Operation: "create", Name: c.name, Persistent: c.persistent, MountCwd: &f}); err != nil {
			t.Fatalf("create %s: %v", c.name, err)
		}
	}
	resp, err := later.Containers(ctx, ContainerRequest{Operation: "list"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range resp.Containers {
		got[c.Name] = c.EarlierSession
	}
	if len(got) != 2 || !got["keep"] || got["mine"] || len(resp.Notes) != 1 || !strings.Contains(resp.Notes[0], "keep outlived") {
		t.Errorf("list in a later session: %v (name: from an earlier session), notes %q; want mine, and keep marked", got, resp.Notes)
	}
	// wai containers ls lists all of the user's, unmarked.
	resp, err = later.Containers(ctx, ContainerRequest{Operation: "list", AllSessions: true})
	if err != nil || len(resp.Containers) != 3 || len(resp.Notes) != 0 {
		t.Errorf("list of all sessions: %+v, %v", resp, err)
	}
}

// Stop keeps a container and its files; start runs it again: both are
// policy actions like every containers operation.
func TestContainersStartStop(t *testing.T) {
	t.Parallel()
	k, fc := containersKernel(t, nil)
	s := session(t, k, "c1")
	ctx := context.Background()
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "box"}); err != nil {
		t.Fatal(err)
	}
	for op, want := range map[string]string{"stop": "exited", "start": "running"} {
		resp, err := s.Containers(ctx, ContainerRequest{Operation: op, Container: "box"})
		if err != nil || resp.Container == nil || resp.Container.State != want {
			t.Errorf("%s: %+v, %v; want state %s", op, resp.Container, err, want)
		}
	}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "start"}); err == nil || !strings.Contains(err.Error(), "give container") {
		t.Errorf("start without a container: %v", err)
	}
	if len(fc.destroyed) != 0 {
		t.Errorf("start and stop destroyed %v", fc.destroyed)
	}
}

// A create reports each step as progress (MCP progress, the CLI's status
// line): a first create can take half a minute, mostly in setup.
func TestContainersCreateReportsSteps(t *testing.T) {
	t.Parallel()
	k, _ := containersKernel(t, nil)
	s := session(t, k, "c1")
	var progress backendtest.Progress
	ctx := progress.Context(context.Background())
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "box", SetupCommands: []string{"make venv"}}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(progress.Stages(), "\n")
	for _, want := range []string{"preflight", "creating and starting container box", "setup command 1/1 in box: make venv"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress stages:\n%s\nwant one with %q", got, want)
		}
	}
}
