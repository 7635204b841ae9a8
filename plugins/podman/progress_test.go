//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

// TestProgressReportsSlowSteps: the first command of a session says it is
// starting the container (and only the first), a pull that cannot work
// says it is pulling, and filling a workspace from host_mounts says so;
// each stage is closed again.
func TestProgressReportsSlowSteps(t *testing.T) {
	t.Parallel()
	t.Run("start", func(t *testing.T) {
		t.Parallel()
		w := openTest(t, newTestBackend(t, backend.Limits{}, nil), false)
		var s backendtest.Progress
		if _, err := w.Shell().Execute(s.Context(bg), backend.ExecRequest{Argv: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
		stage := "starting container " + w.ContainerName()
		if want := []backend.Progress{{Stage: stage}, {Stage: stage, Done: true}}; !slices.Equal(s.Reports(), want) {
			t.Errorf("first command reported %+v, want %+v", s.Reports(), want)
		}
		var again backendtest.Progress
		if _, err := w.Shell().Execute(again.Context(bg), backend.ExecRequest{Argv: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
		if got := again.Reports(); len(got) != 0 {
			t.Errorf("a command in a running container reported %+v, want nothing", got)
		}
	})
	t.Run("pull", func(t *testing.T) {
		t.Parallel()
		img := "localhost/wai-no-such-image:progress"
		w := openTest(t, newTestBackend(t, backend.Limits{}, map[string]any{"image": img}), false)
		var s backendtest.Progress
		if _, err := w.Shell().Execute(s.Context(bg), backend.ExecRequest{Argv: []string{"true"}}); err == nil {
			t.Fatal("a command ran on an image that does not exist")
		}
		stage := "pulling image " + img
		if want := []backend.Progress{{Stage: stage}, {Stage: stage, Done: true}}; !slices.Equal(s.Reports(), want) {
			t.Errorf("failed pull reported %+v, want %+v", s.Reports(), want)
		}
	})
	t.Run("hydrate", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a"), 0o644); err != nil {
			t.Fatal(err)
		}
		b := newTestBackend(t, backend.Limits{}, map[string]any{
			"host_mounts":        []map[string]any{{"host_path": root, "mount_path": "src"}},
			"allowed_host_roots": []string{root},
		})
		var s backendtest.Progress
		ws, err := b.Open(s.Context(bg), backend.WorkspaceSpec{Session: session("prog")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ws.Close(bg) })
		stage := "copying host_mounts into the workspace"
		if want := []backend.Progress{{Stage: stage}, {Stage: stage, Done: true}}; !slices.Equal(s.Reports(), want) {
			t.Errorf("hydrating open reported %+v, want %+v", s.Reports(), want)
		}
	})
}
