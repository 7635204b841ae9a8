//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/volumes"
	entitiesTypes "github.com/containers/podman/v5/pkg/domain/entities/types"

	"github.com/wai-dev/wai/host/backend"
)

// filesBackend is a volume-mode backend whose files volume is its own: its
// agent binary has bytes appended (the ELF runs the same), so the volume's
// content-hashed name is one no other test uses. It returns that name; the
// volume is removed once the backend is closed.
func filesBackend(t *testing.T, log *slog.Logger) (*Backend, string) {
	t.Helper()
	needPodman(t)
	bin, err := os.ReadFile(agentBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(t.TempDir(), "wai-agent")
	if err := os.WriteFile(agent, append(bin, []byte("\n"+newID())...), 0o755); err != nil {
		t.Fatal(err)
	}
	var name string
	var b *Backend
	t.Cleanup(func() { // registered first, so it runs after Close
		if b == nil || name == "" {
			return
		}
		svc := newService(b.cfg.URL, b.cfg.Identity)
		defer svc.drop()
		if cctx, err := svc.ctx(bg); err == nil {
			_ = volumes.Remove(cctx, name, new(volumes.RemoveOptions).WithForce(true))
		}
	})
	b, err = New(bg, backend.Options{Config: testConfig(t, withVolume(map[string]any{"agent_path": agent})), StateDir: t.TempDir(), Logger: log})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		_ = b.Close(ctx)
	})
	if name, _, err = b.serviceFileSet(); err != nil {
		t.Fatal(err)
	}
	testFilesVolumes.Store(name, true)
	return b, name
}

// testFilesVolumes are the files volumes filesBackend made: the only ones
// wai gc run by this package's tests may sweep, as the service is shared
// with other tests and other builds, whose volumes are not theirs to take.
var testFilesVolumes sync.Map

func init() {
	collectFilesScope = func(v string) bool { _, ok := testFilesVolumes.Load(v); return ok }
}

// createFilesVolume makes the volume name as a half-made fill or someone
// else would leave it: empty, with the given labels.
func createFilesVolume(t *testing.T, b *Backend, name string, labels map[string]string) {
	t.Helper()
	cctx := onServiceCtx(t, b.svc)
	if _, err := volumes.Create(cctx, entitiesTypes.VolumeCreateOptions{Name: name, Labels: labels}, nil); err != nil {
		t.Fatal(err)
	}
}

// checkFilesVolume fails unless the files volume holds exactly wai's files
// and the marker (read on this machine: the tests' service is local).
func checkFilesVolume(t *testing.T, b *Backend, name string) {
	t.Helper()
	cctx := onServiceCtx(t, b.svc)
	v, err := volumes.Inspect(cctx, name, nil)
	if err != nil {
		t.Fatalf("the files volume %s: %v", name, err)
	}
	_, files, err := b.serviceFileSet()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if got, err := os.ReadFile(path.Join(v.Mountpoint, f.name)); err != nil || !bytes.Equal(got, f.body) {
			t.Errorf("%s in the files volume: %d bytes, %v; want %d bytes", f.name, len(got), err, len(f.body))
		}
	}
	if _, err := os.Stat(path.Join(v.Mountpoint, filesMarker)); err != nil {
		t.Errorf("the files volume lacks its marker: %v", err)
	}
}

// A files volume a killed fill left empty, labelled as wai's, is filled
// again rather than used: the session starts and runs through the agent.
func TestFilesVolumeHalfMadeRefilled(t *testing.T) {
	t.Parallel()
	b, name := filesBackend(t, nil)
	createFilesVolume(t, b, name, map[string]string{labelManaged: "true", labelKind: kindFiles})
	w := openTest(t, b, false)
	if res := sh(t, w, "echo ran"); res.Stdout != "ran\n" {
		t.Fatalf("a session on the refilled files volume: %+v", res)
	}
	checkFilesVolume(t, b, name)
}

// cancelOn is a slog handler that cancels a context at one event.
type cancelOn struct {
	event  string
	cancel context.CancelFunc
}

func (c cancelOn) Enabled(context.Context, slog.Level) bool { return true }
func (c cancelOn) Handle(_ context.Context, r slog.Record) error {
	if r.Message == c.event {
		c.cancel()
	}
	return nil
}
func (c cancelOn) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c cancelOn) WithGroup(string) slog.Handler      { return c }

// A fill cancelled after the volume was made removes the volume; the next
// call makes and fills it whole.
func TestFilesVolumeFillCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	b, name := filesBackend(t, slog.New(cancelOn{"runtime.podman.files_filling", cancel}))
	if _, _, err := b.filesOnService(ctx); err == nil {
		t.Fatal("a fill cancelled midway succeeded")
	}
	if _, ok := volumeLabels(t, b, name); ok {
		t.Fatalf("the cancelled fill left the volume %s", name)
	}
	seccomp, agent, err := b.filesOnService(bg)
	if err != nil || !strings.HasSuffix(seccomp, "/seccomp.json") || !strings.HasSuffix(agent, "/wai-agent") {
		t.Fatalf("filesOnService after the cancelled fill: %q %q %v", seccomp, agent, err)
	}
	checkFilesVolume(t, b, name)
}

// A volume of the files volume's name that wai did not make is refused at
// the session's first command, which starts its container, with the way
// out; the volume is left as it was.
func TestFilesVolumeForeignRefused(t *testing.T) {
	t.Parallel()
	b, name := filesBackend(t, nil)
	createFilesVolume(t, b, name, map[string]string{"someone": "else"})
	w := openTest(t, b, false)
	ctx, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	_, err := w.Shell().Execute(ctx, backend.ExecRequest{Shell: "true"})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "wai did not make") || !strings.Contains(err.Error(), "podman volume rm "+name) {
		t.Fatalf("Open with a foreign files volume: %v", err)
	}
	if labels, ok := volumeLabels(t, b, name); !ok || labels["someone"] != "else" {
		t.Errorf("the foreign volume was touched: exists %v, labels %v", ok, labels)
	}
}

// A files volume checked on one service is checked again on another: the
// name is the same on every service. Here the two are one Podman service
// reached at two spellings of its socket, and the marker is taken away
// between them, as a half-made volume on the second would lack it.
func TestFilesVolumeCheckedPerService(t *testing.T) {
	t.Parallel()
	first, name := filesBackend(t, nil)
	if _, _, err := first.filesOnService(bg); err != nil {
		t.Fatal(err)
	}
	sock, ok := strings.CutPrefix(first.cfg.URL, "unix://")
	if !ok {
		t.Skipf("the test service is not a unix socket: %s", first.cfg.URL)
	}
	cctx := onServiceCtx(t, first.svc)
	v, err := volumes.Inspect(cctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path.Join(v.Mountpoint, filesMarker)); err != nil {
		t.Fatal(err)
	}
	other := "unix://" + filepath.Dir(sock) + "/./" + filepath.Base(sock)
	second, err := New(bg, backend.Options{StateDir: t.TempDir(),
		Config: testConfig(t, withVolume(map[string]any{"agent_path": first.agentBin, "url": other}))})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = second.Close(bg) }()
	if _, _, err := second.filesOnService(bg); err != nil {
		t.Fatal(err)
	}
	checkFilesVolume(t, second, name)
}
