//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/bindings/volumes"
	entitiesTypes "github.com/containers/podman/v5/pkg/domain/entities/types"

	"github.com/wai-dev/wai/host/backend"
)

// An Open whose host_mounts cannot be copied in (over max_bytes) fails
// and undoes what it made: no volume, no container, no state file.
func TestVolumeWorkspaceHydrateFailUndone(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "big.txt"), bytes.Repeat([]byte("x"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newTestBackend(t, backend.Limits{}, withVolume(map[string]any{
		"allowed_host_roots": []string{src},
		"host_mounts":        []map[string]any{{"host_path": src, "mount_path": "in", "max_bytes": 10}},
	}))
	spec := backend.WorkspaceSpec{Session: session("vh")}
	p, err := b.cfg.pathsFor(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	ws, err := b.Open(ctx, spec)
	if err == nil {
		ws.Close(ctx)
	}
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "max_bytes") {
		t.Fatalf("Open with a mount over max_bytes: %v", err)
	}
	if _, ok := volumeLabels(t, b, p.volume); ok {
		t.Errorf("the failed Open left its volume %s", p.volume)
	}
	cctx := onServiceCtx(t, b.svc)
	if ok, err := containers.Exists(cctx, p.name, nil); err != nil || ok {
		t.Errorf("the failed Open left its container %s (%v)", p.name, err)
	}
	if _, err := os.Stat(p.state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed Open left its state file: %v", err)
	}
}

// A host_mounts file that changes size between the listing and the copy
// fails the copy, naming the file, rather than bust the listed budget. The
// change is a race in real life: here the plan states the old size.
func TestHydrateTarChangedSize(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "grew.txt")
	if err := os.WriteFile(f, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := []hydrateEntry{{file: hydrateFile{src: f, rel: "grew.txt", size: 4, mode: 0o644}, target: "in/grew.txt"}}
	var out bytes.Buffer
	var n int64
	err := writeHydrateTar(bg, tar.NewWriter(&out), plan, 1000, 1000, &n)
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "changed size") || !strings.Contains(err.Error(), f) {
		t.Fatalf("a file that changed size: %v", err)
	}
	if n != 0 || bytes.Contains(out.Bytes(), []byte("0123456789")) {
		t.Errorf("the changed file was copied anyway (%d bytes)", n)
	}
	plan[0].file.size = 10
	if err := writeHydrateTar(bg, tar.NewWriter(&out), plan, 1000, 1000, &n); err != nil || n != 10 {
		t.Errorf("the same file at its listed size: %d bytes, %v", n, err)
	}
}

// removeVolume leaves alone a volume that is not wai's, and one that is
// another session's workspace; it removes the session's own.
func TestRemoveVolumeLeavesOthers(t *testing.T) {
	t.Parallel()
	needPodman(t)
	cfg := parsedTestConfig(t, volumeExtra)
	svc := newService(cfg.URL, cfg.Identity)
	defer svc.drop()
	cctx := onServiceCtx(t, svc)
	mine := session("rv")
	wai := map[string]string{labelManaged: "true", labelKind: kindWorkspace, labelSession: mine}
	other := map[string]string{labelManaged: "true", labelKind: kindWorkspace, labelSession: session("rv")}
	for _, c := range []struct {
		labels map[string]string
		gone   bool
	}{{map[string]string{"someone": "else", labelSession: mine}, false}, {other, false}, {wai, true}} {
		name := "wai-test-rv-" + newID()[:10]
		if _, err := volumes.Create(cctx, entitiesTypes.VolumeCreateOptions{Name: name, Labels: c.labels}, nil); err != nil {
			t.Fatal(err)
		}
		err := removeVolume(bg, svc, name, mine)
		exists, xerr := volumes.Exists(cctx, name, nil)
		if xerr != nil {
			t.Fatal(xerr)
		}
		if exists == c.gone || (err == nil) != c.gone {
			t.Errorf("labels %v: removeVolume = %v, volume still there %v", c.labels, err, exists)
		}
		if exists {
			_ = volumes.Remove(cctx, name, nil)
		}
	}
}

// copyVolumeRefusals: a copy with the session's volume workspace refuses
// a session not open in this process, the workspace itself as the target,
// and a container path that does not exist, each with its kind.
func copyVolumeRefusals(t *testing.T, b *Backend, ref backend.ContainerRef, id string) {
	t.Helper()
	stranger := backend.ContainerOwner{Session: session("none")}
	if _, err := b.copyVolume(bg, "containers.copy_in", stranger, "d", id, "/tmp/x", true); !errors.Is(err, backend.ErrUnavailable) ||
		!strings.Contains(err.Error(), "open the session in this process") {
		t.Errorf("copy with a session not open here: %v", err)
	}
	if _, err := b.CopyFromContainer(bg, ref, backend.ContainerCopy{HostPath: ".", ContainerPath: "/tmp/d"}); !errors.Is(err, backend.ErrInvalid) ||
		!strings.Contains(err.Error(), "not the workspace itself") {
		t.Errorf("copy_out onto the workspace itself: %v", err)
	}
	if _, err := b.CopyFromContainer(bg, ref, backend.ContainerCopy{HostPath: "nothing", ContainerPath: "/tmp/no-such"}); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("copy_out of a missing container path: %v", err)
	}
	if _, err := b.CopyToContainer(bg, ref, backend.ContainerCopy{HostPath: "no-such", ContainerPath: "/tmp/y"}); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("copy_in of a missing workspace path: %v", err)
	}
}
