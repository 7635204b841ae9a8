//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/bindings/volumes"
	"github.com/containers/podman/v5/pkg/specgen"
	spec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/wai-dev/wai/host/backend"
)

// filledBackend is filesBackend with its files volume made and filled.
func filledBackend(t *testing.T) (*Backend, string) {
	t.Helper()
	b, name := filesBackend(t, nil)
	if _, _, err := b.filesOnService(bg); err != nil {
		t.Fatal(err)
	}
	return b, name
}

// leftContainer creates, and never starts, a container as something else
// than a session would: a fill a killed process left (mounting the files
// volume as a volume) or another container that only bind-mounts a file
// of it. It is removed when the test ends.
func leftContainer(t *testing.T, b *Backend, name string, labels map[string]string, vols []*specgen.NamedVolume, mounts []spec.Mount) {
	t.Helper()
	cctx := onServiceCtx(t, b.svc)
	s := specgen.NewSpecGenerator(b.image(), false)
	s.Name, s.Command, s.Labels, s.Volumes, s.Mounts = name, []string{"true"}, labels, vols, mounts
	resp, err := containers.CreateWithSpec(cctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.removeQuiet(resp.ID) })
}

// gcItems maps the report's items of the files sweep to their reasons.
func gcItems(items []backend.GCItem) map[string]string {
	out := map[string]string{}
	for _, it := range items {
		if it.Kind == gcKindFilesVolume || it.Kind == gcKindFill {
			out[it.Kind+" "+it.Name] = it.Reason
		}
	}
	return out
}

// gc removes fill containers once ten minutes old, and the files volumes
// of other builds that no container uses once a day old; it keeps the
// current volume and those a container uses by a bind mount alone, which
// Podman does not count (a running session's, and one never started).
func TestGCFilesVolumes(t *testing.T) {
	t.Parallel()
	stale, staleName := filledBackend(t)
	fill := staleName + fillInfix + newID()[:8]
	leftContainer(t, stale, fill, map[string]string{labelManaged: "true", labelKind: kindFiles},
		[]*specgen.NamedVolume{{Name: staleName, Dest: "/files"}}, nil)
	used, usedName := filesBackend(t, nil)
	sh(t, openTest(t, used, false), "true")
	held, heldName := filledBackend(t)
	_, agent, err := held.filesOnService(bg)
	if err != nil {
		t.Fatal(err)
	}
	leftContainer(t, held, "wai-test-held-"+newID()[:8], nil, nil,
		[]spec.Mount{{Destination: agentMountPath, Type: "bind", Source: agent, Options: []string{"bind", "ro"}}})
	cur, curName := filledBackend(t)
	mine := filesScope(func(v string) bool { return v == staleName || v == usedName || v == heldName || v == curName })
	gc := func(after time.Duration) backend.GCReport {
		var rep backend.GCReport
		cur.gcFiles(bg, mine, time.Now().Add(after), &rep)
		if len(rep.Errors) > 0 {
			t.Fatalf("gc: %v", rep.Errors)
		}
		return rep
	}
	// Five minutes on, the fill may still be filling and every volume is
	// young: nothing goes.
	if rep := gc(5 * time.Minute); len(rep.Removed) > 0 || len(gcItems(rep.Kept)) != 5 {
		t.Fatalf("gc five minutes on: removed %v, kept %v", rep.Removed, rep.Kept)
	}
	// Half an hour on, the fill is a killed process's and goes; the
	// volume it held is unused now, but young.
	rep := gc(30 * time.Minute)
	if removed := gcItems(rep.Removed); len(removed) != 1 || removed[gcKindFill+" "+fill] == "" {
		t.Errorf("gc half an hour on removed %v; want the fill container alone", removed)
	}
	if why := gcItems(rep.Kept)[gcKindFilesVolume+" "+staleName]; !strings.Contains(why, "made less than") {
		t.Errorf("gc half an hour on kept %s for %q; want it kept as young", staleName, why)
	}
	rep = gc(filesVolumeMargin + time.Hour)
	removed, kept := gcItems(rep.Removed), gcItems(rep.Kept)
	if len(removed) != 1 || removed[gcKindFilesVolume+" "+staleName] == "" {
		t.Errorf("gc a day on removed %v; want %s alone", removed, staleName)
	}
	for name, want := range map[string]string{usedName: "uses it", heldName: "uses it", curName: "this wai"} {
		if why := kept[gcKindFilesVolume+" "+name]; !strings.Contains(why, want) {
			t.Errorf("gc a day on kept %s for %q; want %q (kept %v)", name, why, want, kept)
		}
	}
	if _, ok := volumeLabels(t, cur, staleName); ok {
		t.Errorf("the removed files volume %s is still there", staleName)
	}
	if containerExists(t, cur, fill) {
		t.Errorf("the removed fill container %s is still there", fill)
	}
	// wai gc runs the sweep: its report names the current volume, kept.
	all, err := cur.CollectGarbage(bg, backend.GCOptions{Match: func(string) bool { return false }})
	if err != nil || !strings.Contains(gcItems(all.Kept)[gcKindFilesVolume+" "+curName], "this wai") {
		t.Errorf("CollectGarbage: kept %v, %v; want %s kept as this wai's", all.Kept, err, curName)
	}
}

// A files volume removed under a backend that cached its paths (by wai gc
// of another build, or by hand) is made again at the next container
// creation, of a session's container (the seccomp profile is missing at
// create) and of a managed one, rather than every creation failing until
// the process restarts.
func TestFilesVolumeRemovedUnderBackend(t *testing.T) {
	t.Parallel()
	b, name := filesBackend(t, nil)
	cctx := onServiceCtx(t, b.svc)
	drop := func() {
		t.Helper()
		if err := volumes.Remove(cctx, name, nil); err != nil {
			t.Fatalf("removing the files volume by hand: %v", err)
		}
	}
	first := openTest(t, b, false)
	sh(t, first, "true")
	ctx, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	drop()
	w := openTest(t, b, false)
	if res := sh(t, w, "echo ran"); res.Stdout != "ran\n" {
		t.Fatalf("a session after its files volume was removed: %+v", res)
	}
	checkFilesVolume(t, b, name)
	// Then a managed container, on the same backend.
	owner := backend.ContainerOwner{Session: w.session}
	t.Cleanup(func() { _, _ = b.DestroyContainers(context.WithoutCancel(ctx), owner, false) })
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	drop()
	info := create(t, b, backend.ContainerSpec{Owner: owner})
	if res := cexec(t, b, backend.ContainerRef{Owner: owner, Name: info.Name}, "echo ran"); res.Stdout != "ran\n" {
		t.Fatalf("a managed container after the files volume was removed: %+v", res)
	}
	checkFilesVolume(t, b, name)
}
