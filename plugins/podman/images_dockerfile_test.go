//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// A failed build that prints more than dockerfileOutputCap keeps its
// start and, what says why it failed, its end; the result says it was
// cut, and the error quotes the last lines.
func TestDockerfileBuildOutputCapped(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, map[string]any{"containers": map[string]any{"build_dockerfiles": true}})
	dir := t.TempDir()
	// seq prints about 110 KiB, well over the 64 KiB kept.
	dockerfile := "FROM " + testImage() + "\nRUN seq 1 20000 && echo the-reason-it-failed && exit 3\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 3*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var steps []string
	say := func(p backend.ImageProgress) {
		mu.Lock()
		defer mu.Unlock()
		steps = append(steps, p.Message)
	}
	img, err := b.BuildDockerfile(ctx, backend.ContainerOwner{Session: session("bo")},
		backend.DockerfileBuild{ContextDir: dir, Key: "test-" + newID(), Progress: say})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "the-reason-it-failed") {
		t.Fatalf("a failing build: %v", err)
	}
	out := img.Output
	if len(out) > dockerfileOutputCap+100 || !strings.Contains(out, backend.TruncatedMarker) {
		t.Errorf("%d bytes kept of a build's output over the cap, cut marked: %v", len(out), strings.Contains(out, backend.TruncatedMarker))
	}
	if !strings.Contains(out[:min(len(out), 200)], "STEP 1/") || !strings.Contains(out[max(0, len(out)-4096):], "20000\nthe-reason-it-failed") {
		t.Errorf("the start or the end of the output is missing:\n%.300s\n...\n%s", out, out[max(0, len(out)-300):])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(steps) < 2 {
		t.Errorf("progress saw steps %q", steps)
	}
}
