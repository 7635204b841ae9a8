package host

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// fakeSnapshots is a containers backend that also takes snapshots: in
// memory, per user.
type fakeSnapshots struct {
	*fakeContainers
	snaps map[string]backend.SnapshotInfo // user + "/" + name
}

func (f *fakeSnapshots) SnapshotContainer(_ context.Context, ref backend.ContainerRef, name string) (backend.SnapshotInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.live[ref.Name]
	if !ok || c.User != ref.Owner.User {
		return backend.SnapshotInfo{}, backend.Errorf(backend.ErrNotFound, "containers.snapshot", ref.Name, "no such container")
	}
	if name == "" {
		name = ref.Name + "-snap"
	}
	if _, ok := f.snaps[ref.Owner.User+"/"+name]; ok {
		return backend.SnapshotInfo{}, backend.Errorf(backend.ErrExist, "containers.snapshot", name, "exists")
	}
	info := backend.SnapshotInfo{Name: name, Image: "localhost/fake-snapshot:" + name, Container: ref.Name, User: ref.Owner.User, StrippedEnv: c.EnvKeys}
	f.snaps[ref.Owner.User+"/"+name] = info
	return info, nil
}

func (f *fakeSnapshots) ListSnapshots(_ context.Context, o backend.ContainerOwner) ([]backend.SnapshotInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []backend.SnapshotInfo{}
	for _, s := range f.snaps {
		if s.User == o.User {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *fakeSnapshots) SnapshotImage(_ context.Context, o backend.ContainerOwner, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.snaps[o.User+"/"+name]
	if !ok {
		return "", backend.Errorf(backend.ErrNotFound, "containers.restore", name, "no such snapshot")
	}
	return s.Image, nil
}

func (f *fakeSnapshots) DeleteSnapshot(_ context.Context, o backend.ContainerOwner, name string) (backend.SnapshotInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.snaps[o.User+"/"+name]
	if !ok {
		return s, backend.Errorf(backend.ErrNotFound, "containers.delete_snapshot", name, "no such snapshot")
	}
	delete(f.snaps, o.User+"/"+name)
	return s, nil
}

// Interface guards
var _ backend.ContainerSnapshots = (*fakeSnapshots)(nil)

func snapshotsKernel(t *testing.T, policyConfig map[string]any, opts ...Option) (*Kernel, *fakeSnapshots) {
	t.Helper()
	fs := &fakeSnapshots{fakeContainers: newFakeContainers(), snaps: map[string]backend.SnapshotInfo{}}
	return safetyKernel(t, testConfig(t), policyConfig, fs, opts...), fs
}

// The kernel's snapshot operations: snapshot notes the stripped
// variables, restore is a create from the snapshot's image and is gated
// as one (GPU, the container count), delete and list reach the backend.
func TestContainersSnapshotsKernel(t *testing.T) {
	ctx := context.Background()
	var seen []string // what a policy sees of restores
	spy := funcPolicy{name: "spy", check: func(r CheckRequest) (bool, string) {
		if r.Action == "containers.restore" {
			seen = append(seen, r.Container.Image+"|"+r.Container.Snapshot)
		}
		return true, ""
	}}
	k, fs := snapshotsKernel(t, map[string]any{"max_containers_per_session": 2}, WithPolicy(spy))
	s := session(t, k, "snap")
	do := func(req ContainerRequest) (ContainerResponse, error) { return s.Containers(ctx, req) }
	if _, err := do(ContainerRequest{Operation: "create", Name: "box", Env: map[string]string{"FOO_API_KEY": "k"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := do(ContainerRequest{Operation: "snapshot"}); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "give container") {
		t.Errorf("snapshot without a container: %v", err)
	}
	resp, err := do(ContainerRequest{Operation: "snapshot", Container: "box", Snapshot: "s1"})
	if err != nil || resp.Snapshot == nil || resp.Snapshot.Name != "s1" || len(resp.Notes) != 1 || !strings.Contains(resp.Notes[0], "FOO_API_KEY") {
		t.Fatalf("snapshot: %+v, %v", resp, err)
	}
	if resp, err := do(ContainerRequest{Operation: "list_snapshots"}); err != nil || len(resp.Snapshots) != 1 {
		t.Errorf("list_snapshots: %+v, %v", resp, err)
	}
	for _, bad := range []struct {
		req  ContainerRequest
		kind error
		want string
	}{
		{ContainerRequest{Operation: "restore"}, backend.ErrInvalid, "give snapshot"},
		{ContainerRequest{Operation: "restore", Snapshot: "s1", Image: "debian"}, backend.ErrInvalid, "drop image"},
		{ContainerRequest{Operation: "restore", Snapshot: "nope"}, backend.ErrNotFound, "no such snapshot"},
		{ContainerRequest{Operation: "restore", Snapshot: "s1", GPU: true}, backend.ErrPermission, "allow_gpu"},
		{ContainerRequest{Operation: "delete_snapshot"}, backend.ErrInvalid, "give snapshot"},
	} {
		if _, err := do(bad.req); !errors.Is(err, bad.kind) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v; want %v naming %q", bad.req, err, bad.kind, bad.want)
		}
	}
	seen = nil
	resp, err = do(ContainerRequest{Operation: "restore", Snapshot: "s1", Name: "box2", Purpose: "again"})
	if strings.Join(seen, ",") != "localhost/fake-snapshot:s1|s1" {
		t.Errorf("a policy saw restore as %v; want the snapshot's image and name", seen)
	}
	if err != nil || resp.Container == nil || resp.Container.Name != "box2" {
		t.Fatalf("restore: %+v, %v", resp, err)
	}
	if last := fs.created[len(fs.created)-1]; last.Image != "localhost/fake-snapshot:s1" || last.Purpose != "again" || !last.MountWorkspace {
		t.Errorf("restore created %+v; want the snapshot's image with create's parameters", last)
	}
	if _, err := do(ContainerRequest{Operation: "restore", Snapshot: "s1", Name: "box3"}); !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "max_containers_per_session") {
		t.Errorf("a restore over max_containers_per_session: %v", err)
	}
	if resp, err := do(ContainerRequest{Operation: "delete_snapshot", Snapshot: "s1"}); err != nil || resp.Snapshot.Name != "s1" {
		t.Errorf("delete_snapshot: %+v, %v", resp, err)
	}
	if resp, err := do(ContainerRequest{Operation: "list_snapshots"}); err != nil || len(resp.Snapshots) != 0 {
		t.Errorf("list_snapshots after delete: %+v, %v", resp, err)
	}
	// A backend without snapshots says so.
	k2, _ := containersKernel(t, nil)
	if _, err := session(t, k2, "n").Containers(ctx, ContainerRequest{Operation: "list_snapshots"}); !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("a backend without snapshots: %v, want ErrUnavailable", err)
	}
}

// toolSnapshots runs the snapshot operations through the containers tool
// as Wasm (TestContainersToolPlugin: one plugin build for both), on a
// kernel with a fakeSnapshots backend where box exists.
func toolSnapshots(t *testing.T, call func(string) ToolResult) {
	t.Helper()
	for _, c := range []struct {
		args string
		ok   bool
		want string
	}{
		{`{"operation":"snapshot","container":"box","snapshot":"s1"}`, true, "Saved snapshot s1 (of container box"},
		{`{"operation":"snapshot","container":"box","snapshot":"s1"}`, false, "snapshot failed"},
		{`{"operation":"list_snapshots"}`, true, "- s1 (of container box"},
		{`{"operation":"restore","snapshot":"s1","name":"box2"}`, true, "Restored snapshot s1 as box2"},
		{`{"operation":"restore","snapshot":"s1","gpu":true}`, false, "allow_gpu"},
		{`{"operation":"delete_snapshot","snapshot":"s1"}`, true, "Deleted snapshot s1."},
		{`{"operation":"list_snapshots"}`, true, "No snapshots."},
		{`{"operation":"snapshot","container":"box","snapshot":"s2"}`, true, "A were not saved"},
	} {
		if r := call(c.args); r.OK != c.ok || !strings.Contains(r.Message, c.want) {
			t.Errorf("%s: ok=%v %q; want ok=%v and %q", c.args, r.OK, r.Message, c.ok, c.want)
		}
	}
}
