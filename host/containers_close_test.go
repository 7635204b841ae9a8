package host

import (
	"context"
	"testing"
)

// Closing the kernel closes its sessions, which destroy their
// non-persistent containers: the kernel is closed by then, and must not
// refuse them the backend.
func TestKernelCloseDestroysSessionContainers(t *testing.T) {
	k, fc := containersKernel(t, nil)
	ctx := context.Background()
	s := session(t, k, "closing")
	for _, r := range []ContainerRequest{{Operation: "create", Name: "tmp"}, {Operation: "create", Name: "kept", Persistent: true}} {
		if _, err := s.Containers(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(fc.destroyed) != 1 || fc.destroyed[0] != "tmp" {
		t.Errorf("destroyed when the kernel closed: %v, want tmp only", fc.destroyed)
	}
}
