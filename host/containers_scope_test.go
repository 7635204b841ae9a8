package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// A session reaches what list shows it: its own containers and the user's
// persistent ones. Another session's working container is not its to
// exec in, stop or destroy; the operator's scope (wai containers) is.
func TestContainersStayInTheirSession(t *testing.T) {
	k, fc := containersKernel(t, nil)
	ctx := context.Background()
	first, second := session(t, k, "first"), session(t, k, "second")
	for _, req := range []ContainerRequest{{Operation: "create", Name: "work"}, {Operation: "create", Name: "kept", Persistent: true}} {
		if _, err := first.Containers(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	for _, op := range []string{"exec", "status", "stop", "destroy", "copy_out", "exec_background", "snapshot"} {
		_, err := second.Containers(ctx, ContainerRequest{Operation: op, Container: "work", Command: "true", HostPath: "out", ContainerPath: "/tmp"})
		if !errors.Is(err, backend.ErrNotFound) || !strings.Contains(err.Error(), "another session made it") {
			t.Errorf("%s on another session's container: %v, want not found, saying why", op, err)
		}
	}
	if fc.live["work"].State != "running" {
		t.Fatalf("another session's container was touched: %+v", fc.live["work"])
	}
	if r, err := second.Containers(ctx, ContainerRequest{Operation: "exec", Container: "kept", Command: "true"}); err != nil || r.Exec == nil {
		t.Errorf("exec in the user's persistent container: %+v, %v", r, err)
	}
	if _, err := first.Containers(ctx, ContainerRequest{Operation: "exec", Container: "work", Command: "true"}); err != nil {
		t.Errorf("exec in the session's own container: %v", err)
	}
	operator := ContainerRequest{Operation: "stop", Container: "work", AllSessions: true}
	if _, err := second.Containers(ctx, operator); err != nil || fc.live["work"].State != "exited" {
		t.Errorf("the operator's scope reaches every container of the user: %v, %+v", err, fc.live["work"])
	}
}
