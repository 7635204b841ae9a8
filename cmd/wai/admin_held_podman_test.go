//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// wai rm refuses what a live session made (a persistent container, a
// network, a snapshot), naming the process holding the session, and wai
// ps shows that process as their holder, as wai gc keeps them; once the
// session is over, wai rm removes what outlived it and says what it was.
func TestRmKeepsWhatALiveSessionMade(t *testing.T) {
	t.Parallel()
	id := testID(t)
	state, table := plugbuild.StateDir(t), podmanTable("wai-cli-"+id, "")
	config := writePodmanConfig(t, state, "", table)
	podmanServes(t, config)
	b := managedBackend(t, state, table)
	ctr, net, snap := "held-"+id, "heldnet-"+id, "heldsnap-"+id
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_, _ = b.DestroyContainers(ctx, backend.ContainerOwner{}, false)
		_, _ = b.DestroyNetworks(ctx, backend.ContainerOwner{}, false)
		_, _ = b.DeleteSnapshot(ctx, backend.ContainerOwner{}, snap)
	})
	s := heldSession(t, config)
	ctx := t.Context()
	for _, req := range []host.ContainerRequest{
		{Operation: "create_network", Name: net, Persistent: true},
		{Operation: "create", Name: ctr, Network: net, Persistent: true},
		{Operation: "snapshot", Container: ctr, Snapshot: snap},
	} {
		if _, err := s.Containers(ctx, req); err != nil {
			t.Fatalf("%s: %v", req.Operation, err)
		}
	}
	entries := []string{"container/" + ctr, "network/" + net, "snapshot/" + snap}
	holder := fmt.Sprintf("pid %d on ", os.Getpid())
	held := psHolders(t, config)
	for _, e := range entries {
		if !strings.HasPrefix(held[e], holder) {
			t.Errorf("wai ps shows %s held by %q, want %q… (the session that made it)", e, held[e], holder)
		}
		r := inProcess(t, config, "rm", "--force", "--config", config, e)
		if r.code != exitError || !strings.Contains(r.stderr, "in use by "+holder) || !strings.Contains(r.stderr, "run wai rm again") {
			t.Errorf("wai rm %s while its session is held: %+v; want a refusal naming %s…", e, r, holder)
		}
	}
	if _, err := b.ContainerStatus(ctx, backend.ContainerRef{Name: ctr}, false); err != nil {
		t.Fatalf("the refused wai rm removed %s: %v", ctr, err)
	}
	r := inProcess(t, config, "gc", "--why", "--config", config)
	if r.code != 0 || !strings.Contains(r.stdout, "kept    podman managed-container "+ctr) || strings.Contains(r.stdout, "--why says why") {
		t.Errorf("wai gc --why: %+v; want %s kept, and no pointer to --why", r, ctr)
	}

	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	held = psHolders(t, config)
	want := map[string]string{entries[0]: "managed container " + ctr, entries[1]: "managed network " + net, entries[2]: "snapshot " + snap}
	for _, e := range entries {
		if h, ok := held[e]; !ok || h != "" {
			t.Errorf("wai ps after the session ended: %s held by %q (listed: %v), want listed and held by none", e, h, ok)
		}
		r := inProcess(t, config, "rm", "--config", config, e)
		if line := "removed podman " + want[e] + " (session live)\n"; r.code != 0 || r.stdout != line {
			t.Errorf("wai rm %s after its session ended: %+v; want %q", e, r, line)
		}
	}
	if cs, err := b.ListContainers(ctx, backend.ContainerOwner{}); err != nil || len(cs) != 0 {
		t.Errorf("containers after wai rm: %+v, %v; want none", cs, err)
	}
	if ss, err := b.ListSnapshots(ctx, backend.ContainerOwner{}); err != nil || len(ss) != 0 {
		t.Errorf("snapshots after wai rm: %+v, %v; want none", ss, err)
	}
}

// heldSession opens session "live" in a kernel of config's, which this
// process holds until the test closes it (or ends).
func heldSession(t *testing.T, config string) *host.Session {
	t.Helper()
	k := podmanKernel(t, config, nil)
	s, err := k.Session(t.Context(), "live", host.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// psHolders runs wai ps --json on config: each entry's holder, by name.
func psHolders(t *testing.T, config string) map[string]string {
	t.Helper()
	r := inProcess(t, config, "ps", "--json", "--config", config)
	var ls []host.SessionEntry
	if err := json.Unmarshal([]byte(r.stdout), &ls); err != nil || r.code != 0 {
		t.Fatalf("wai ps --json: %v; %+v", err, r)
	}
	out := map[string]string{}
	for _, e := range ls {
		out[e.Name] = e.Holder
	}
	return out
}
