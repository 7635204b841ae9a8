//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// netClient fetches from a name on the network (retrying while the server
// starts), then tries the outside: the output says what worked.
const netClient = `python3 - <<'EOF'
import socket, time, urllib.request
for host in ("srv", "web"):
    for i in range(50):
        try:
            print(host, urllib.request.urlopen("http://%s:8080/" % host, timeout=2).status)
            break
        except Exception as e:
            err = e
            time.sleep(0.2)
    else:
        print(host, "failed", err)
t = time.time()
try:
    socket.create_connection(("1.1.1.1", 80), timeout=5)
    print("egress open")
except OSError as e:
    print("egress closed after %.1fs" % (time.time() - t))
EOF`

// cleanNetworks removes the owner's containers, then its networks (a
// network in use cannot go): t.Cleanup runs last-in first-out, so the
// containers' own cleanup would come too late.
func cleanNetworks(t *testing.T, b *Backend, owner backend.ContainerOwner) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := b.DestroyContainers(ctx, owner, false); err != nil {
		t.Errorf("cleanup: %v", err)
	}
	if _, err := b.DestroyNetworks(ctx, owner, false); err != nil {
		t.Errorf("cleanup: %v", err)
	}
}

// defaultRoute prints "default via IFACE" for a default route (destination
// 00000000 in /proc/net/route; the image may have no ip command).
const defaultRoute = `awk 'NR > 1 && $2 == "00000000" {print "default via", $1}' /proc/net/route`

// TestContainerNetworkByName: two containers on an internal network reach
// each other by container name and by service alias, not the outside; the
// network cannot be destroyed while in use, nor used by another user.
func TestContainerNetworkByName(t *testing.T) {
	t.Parallel()
	b, _, owner := containerTest(t, nil)
	ctx, cancel := context.WithTimeout(bg, 3*time.Minute)
	defer cancel()
	name := "wai-net-" + newID()[:8]
	t.Cleanup(func() { cleanNetworks(t, b, owner) })
	if _, err := b.CreateNetwork(ctx, backend.NetworkSpec{Owner: owner, Name: name, Egress: true}); !errors.Is(err, backend.ErrPermission) {
		t.Fatalf("egress without allow_network_egress: got %v, want ErrPermission", err)
	}
	if _, err := b.CreateNetwork(ctx, backend.NetworkSpec{Owner: owner, Name: "podman"}); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("reserved name: got %v, want ErrInvalid", err)
	}
	n, err := b.CreateNetwork(ctx, backend.NetworkSpec{Owner: owner, Name: name})
	if err != nil || !n.Internal || n.Session != owner.Session {
		t.Fatalf("CreateNetwork = %+v, %v; want an internal network of the session", n, err)
	}
	stranger := backend.ContainerOwner{User: "mallory", Session: owner.Session}
	checkNameTaken(t, "network", func(o backend.ContainerOwner) error {
		_, err := b.CreateNetwork(ctx, backend.NetworkSpec{Owner: o, Name: name})
		return err
	}, owner, stranger)
	if _, err := b.CreateContainer(ctx, backend.ContainerSpec{Owner: stranger, Name: "x-" + newID()[:6], Network: name}); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("another user's create on the network: got %v, want ErrNotFound", err)
	}
	if _, err := b.CreateContainer(ctx, backend.ContainerSpec{Owner: owner, Name: "p-" + newID()[:6], Network: name,
		Ports: []backend.ContainerPort{{ContainerPort: 80}}}); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "internal") {
		t.Fatalf("ports on an internal network: got %v, want ErrInvalid", err)
	}
	if _, err := b.CreateContainer(ctx, backend.ContainerSpec{Owner: owner, Name: "k-" + newID()[:6], Network: name, Persistent: true}); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "persistent network") {
		t.Fatalf("a persistent container on a session's network: got %v, want ErrInvalid", err)
	}
	srv := create(t, b, backend.ContainerSpec{Owner: owner, Name: "srv", Network: name, Service: "web",
		Command: []string{"python3", "-m", "http.server", "8080"}})
	cli := create(t, b, backend.ContainerSpec{Owner: owner, Name: "cli-" + newID()[:6], Network: name})
	checkNameTaken(t, "container", func(o backend.ContainerOwner) error {
		_, err := b.CreateContainer(ctx, backend.ContainerSpec{Owner: o, Name: cli.Name})
		return err
	}, owner, stranger)
	if srv.Network != name || cli.Network != name {
		t.Fatalf("containers' network = %q, %q; want %q", srv.Network, cli.Network, name)
	}
	res := cexec(t, b, backend.ContainerRef{Owner: owner, Name: cli.Name}, netClient)
	out := res.Stdout + res.Stderr
	if !strings.Contains(out, "srv 200") || !strings.Contains(out, "web 200") || !strings.Contains(out, "egress closed") {
		t.Fatalf("client output:\n%s\nwant srv 200, web 200 and egress closed", out)
	}
	if r := cexec(t, b, backend.ContainerRef{Owner: owner, Name: cli.Name}, defaultRoute); strings.Contains(r.Stdout, "default via") {
		t.Errorf("a default route on an internal network: %s", r.Stdout)
	}
	ls, err := b.ListNetworks(ctx, owner)
	if err != nil || len(ls) != 1 || strings.Join(ls[0].Containers, ",") != cli.Name+",srv" {
		t.Fatalf("ListNetworks = %+v, %v; want %s used by %s and srv", ls, err, name, cli.Name)
	}
	_, err = b.DestroyNetwork(ctx, backend.ContainerRef{Owner: owner, Name: name})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "in use by") {
		t.Fatalf("DestroyNetwork in use: got %v, want ErrUnavailable naming its containers", err)
	}
	if _, err := b.DestroyContainers(ctx, owner, false); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DestroyNetwork(ctx, backend.ContainerRef{Owner: stranger, Name: name}); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("another user's DestroyNetwork: got %v, want ErrNotFound", err)
	}
	gone, err := b.DestroyNetworks(ctx, owner, true)
	if err != nil || len(gone) != 1 {
		t.Fatalf("DestroyNetworks = %+v, %v; want the one network", gone, err)
	}
	if ls, err := b.ListNetworks(ctx, owner); err != nil || len(ls) != 0 {
		t.Fatalf("ListNetworks after destroy = %+v, %v", ls, err)
	}
}

// TestContainerNetworkGC: wai gc removes the networks of a session that
// is over (persistent ones with --all), never those of a live session.
func TestContainerNetworkGC(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	ws, err := b.Open(bg, backend.WorkspaceSpec{Session: session("netgc")})
	if err != nil {
		t.Fatal(err)
	}
	owner := backend.ContainerOwner{Session: ws.(*Workspace).session}
	t.Cleanup(func() { _, _ = b.DestroyNetworks(context.WithoutCancel(bg), owner, false) })
	temp, kept := "wai-gc-"+newID()[:8], "wai-gck-"+newID()[:8]
	for _, s := range []backend.NetworkSpec{{Owner: owner, Name: temp}, {Owner: owner, Name: kept, Persistent: true}} {
		if _, err := b.CreateNetwork(bg, s); err != nil {
			t.Fatal(err)
		}
	}
	mine := func(s string) bool { return s == owner.Session }
	var rep backend.GCReport
	b.gcContainers(bg, backend.GCOptions{Match: mine}, &rep)
	if len(rep.Removed) != 0 || len(rep.Kept) != 2 {
		t.Fatalf("gc of a live session's networks: removed %+v kept %+v; want both kept", rep.Removed, rep.Kept)
	}
	if err := ws.Close(bg); err != nil {
		t.Fatal(err)
	}
	rep = backend.GCReport{}
	b.gcContainers(bg, backend.GCOptions{Match: mine}, &rep)
	if len(rep.Removed) != 1 || rep.Removed[0].Name != temp || len(rep.Kept) != 1 || rep.Kept[0].Name != kept {
		t.Errorf("gc = removed %+v kept %+v; want %s removed, persistent %s kept", rep.Removed, rep.Kept, temp, kept)
	}
	rep = backend.GCReport{}
	b.gcContainers(bg, backend.GCOptions{Match: mine, All: true}, &rep)
	if len(rep.Removed) != 1 || rep.Removed[0].Name != kept {
		t.Errorf("gc --all = removed %+v, want %s", rep.Removed, kept)
	}
}

// TestReadHostFile: a compose file is read from the session workspace or
// an allowed root, never from elsewhere, and never past its cap.
func TestReadHostFile(t *testing.T) {
	t.Parallel()
	roots := t.TempDir()
	b, w, owner := containerTest(t, map[string]any{"allowed_host_roots": []string{roots}})
	if err := os.WriteFile(filepath.Join(w.Dir(), "compose.yaml"), []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(roots, "big.yaml"), make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	data, real, err := b.ReadHostFile(bg, owner, "compose.yaml", 1<<10)
	if err != nil || string(data) != "services: {}\n" || real != filepath.Join(w.Dir(), "compose.yaml") {
		t.Fatalf("ReadHostFile(workspace) = %q, %q, %v", data, real, err)
	}
	if _, _, err := b.ReadHostFile(bg, owner, filepath.Join(roots, "big.yaml"), 10); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("a file over the cap: %v, want ErrInvalid", err)
	}
	if _, _, err := b.ReadHostFile(bg, owner, "/etc/passwd", 1<<10); !errors.Is(err, backend.ErrPermission) {
		t.Errorf("/etc/passwd: %v, want ErrPermission", err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(w.Dir(), "out.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.ReadHostFile(bg, owner, "out.yaml", 1<<10); err == nil {
		t.Errorf("a symlink out of the workspace was followed")
	}
}

// TestContainerNetworkEgress: with containers.allow_network_egress a
// network may have a route out, and its containers may publish ports.
func TestContainerNetworkEgress(t *testing.T) {
	t.Parallel()
	b, _, owner := containerTest(t, map[string]any{"containers": map[string]any{"allow_network_egress": true}})
	name := "wai-egress-" + newID()[:8]
	t.Cleanup(func() { cleanNetworks(t, b, owner) })
	n, err := b.CreateNetwork(bg, backend.NetworkSpec{Owner: owner, Name: name, Egress: true})
	if err != nil || n.Internal {
		t.Fatalf("CreateNetwork(egress) = %+v, %v; want a network that is not internal", n, err)
	}
	c := create(t, b, backend.ContainerSpec{Owner: owner, Network: name, Ports: []backend.ContainerPort{{ContainerPort: 8080}}})
	if c.Network != name {
		t.Errorf("container's network = %q, want %q", c.Network, name)
	}
	res := cexec(t, b, backend.ContainerRef{Owner: owner, Name: c.Name}, defaultRoute)
	if !strings.Contains(res.Stdout, "default via") {
		t.Errorf("no default route on a network with egress:\n%s", res.Stdout)
	}
}

// checkNameTaken: creating a kind of object whose name owner holds tells
// owner it is theirs, and stranger only that the name is taken here, not
// that a user's object of that kind holds it.
func checkNameTaken(t *testing.T, kind string, create func(backend.ContainerOwner) error, owner, stranger backend.ContainerOwner) {
	t.Helper()
	if err := create(owner); !errors.Is(err, backend.ErrExist) || !strings.Contains(err.Error(), "you have a "+kind+" of that name") {
		t.Errorf("the owner's second %s of a name: %v; want ErrExist saying it is theirs", kind, err)
	}
	err := create(stranger)
	if !errors.Is(err, backend.ErrExist) || !strings.Contains(err.Error(), "taken on this machine") || strings.Contains(err.Error(), "you have") ||
		strings.Contains(err.Error(), kind+" of that name") {
		t.Errorf("another user's %s of a taken name: %v; want ErrExist saying only the name is taken", kind, err)
	}
}
