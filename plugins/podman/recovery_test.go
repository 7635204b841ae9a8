//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/podmansvc"
)

// TestRecreatedAfterOutsideKill: a container killed or removed behind the
// backend's back is recreated on the next call, files intact.
func TestRecreatedAfterOutsideKill(t *testing.T) {
	t.Parallel()
	b, w, rec := recordedSession(t, nil, false)
	sh(t, w, "echo data >file")
	for i, how := range []string{"kill", "remove"} {
		cctx, id := onService(t, b, w)
		var err error
		switch how {
		case "kill": // podman kill
			err = containers.Kill(cctx, id, new(containers.KillOptions).WithSignal("KILL"))
		case "remove": // podman rm -f
			_, err = containers.Remove(cctx, id, new(containers.RemoveOptions).WithForce(true).WithTimeout(0))
		}
		if err != nil {
			t.Fatalf("%s from outside: %v", how, err)
		}
		res := sh(t, w, "cat file")
		if res.ExitCode != 0 || res.Stdout != "data\n" {
			t.Fatalf("after %s from outside: exit %d stdout %q stderr %q", how, res.ExitCode, res.Stdout, res.Stderr)
		}
		if got := rec.count("runtime.podman.recreated_after_failure"); got != i+1 {
			t.Errorf("after %s from outside: %d recreated_after_failure events, want %d (events: %s)", how, got, i+1, rec)
		}
	}
}

// TestServiceRestart: the Podman service going away mid-session makes calls
// fail with ErrUnavailable, and its return makes them work again, with no
// reopening. It runs its own service on its own socket, so the other tests'
// service is never disturbed.
func TestServiceRestart(t *testing.T) {
	t.Parallel()
	needPodman(t)
	svc := podmansvc.Run(t)
	_, w, rec := recordedSession(t, map[string]any{"url": svc.URL()}, false)
	if res := sh(t, w, "echo one >/tmp/state; cat /tmp/state"); res.Stdout != "one\n" {
		t.Fatalf("before the restart: %q %q", res.Stdout, res.Stderr)
	}
	svc.Stop()
	_, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "setup-podman.sh") {
		t.Errorf("with the service down: error %v, want ErrUnavailable saying how to start it", err)
	}
	svc.Start()
	res := sh(t, w, "cat /tmp/state")
	if res.ExitCode != 0 || res.Stdout != "one\n" {
		t.Errorf("after the restart: exit %d stdout %q stderr %q, want the same container's /tmp/state (events: %s)", res.ExitCode, res.Stdout, res.Stderr, rec)
	}
}

// TestServiceMissing: no service, a clear ErrUnavailable from New.
func TestServiceMissing(t *testing.T) {
	t.Parallel()
	_, err := New(bg, backend.Options{Config: testConfig(t, map[string]any{"url": "unix://" + filepath.Join(t.TempDir(), "none.sock")}), StateDir: t.TempDir()})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "scripts/setup-podman.sh") ||
		!strings.Contains(err.Error(), "podman system service") {
		t.Errorf("New with no service: %v, want ErrUnavailable naming setup-podman.sh and podman system service", err)
	}
}

// TestImageMissing: an image that cannot be had fails with what to do,
// and failed pulls back off.
func TestImageMissing(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, map[string]any{"image": "localhost/wai-no-such-image:never", "pull_backoff": "2s"})
	w := openTest(t, b, false)
	_, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "localhost/wai-no-such-image:never") ||
		!strings.Contains(err.Error(), "setup-podman.sh") {
		t.Fatalf("missing image: %v, want ErrUnavailable naming the image and the setup script", err)
	}
	start := time.Now()
	_, err = w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "next attempt in") || time.Since(start) > time.Second {
		t.Errorf("second try within the backoff: %v after %s, want a fast ErrUnavailable saying when the next attempt is", err, time.Since(start))
	}
}

// TestPullBackoffDoubles: each failed pull doubles the wait before the
// next one, up to pull_backoff_max (3 s, not 4 s, on the third), so an unreachable registry is asked
// less and less often. The waits themselves are skipped (TestImageMissing
// checks that a call within one is refused at once).
func TestPullBackoffDoubles(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, map[string]any{
		"image": "localhost/wai-no-such-image:never", "pull_backoff": "1s", "pull_backoff_max": "3s"})
	// Each failed pull takes podman about 3 s (it retries), so three.
	for _, want := range []string{"1s", "2s", "3s"} {
		b.pull.mu.Lock()
		b.pull.next = time.Time{} // the previous wait is over
		b.pull.mu.Unlock()
		err := b.ensureImage(bg)
		if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "pulling it failed") ||
			!strings.Contains(err.Error(), "next attempt in "+want) {
			t.Fatalf("failed pull: %v, want ErrUnavailable with the next attempt in %s", err, want)
		}
		b.pull.mu.Lock()
		delay := b.pull.delay
		b.pull.mu.Unlock()
		if delay.String() != want {
			t.Errorf("backoff after this failure %s, want %s", delay, want)
		}
	}
}
