//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

// testImage is the image the tests run: the one scripts/setup-podman.sh
// builds without a registry, unless WAI_PODMAN_IMAGE names another.
func testImage() string {
	if v := os.Getenv("WAI_PODMAN_IMAGE"); v != "" {
		return v
	}
	return "localhost/wai-python:bookworm"
}

var (
	serviceOnce sync.Once
	serviceErr  error
)

// needPodman skips the test when no Podman service answers (or the test
// image is missing), except on CI, where that is a failure: CI runs
// scripts/setup-podman.sh first, so a missing service is a broken setup.
func needPodman(t testing.TB) {
	t.Helper()
	serviceOnce.Do(func() {
		ctx, cancel := context.WithTimeout(bg, 20*time.Second)
		defer cancel()
		cfg, err := ParseConfig(nil, os.TempDir())
		if err != nil {
			serviceErr = err
			return
		}
		svc := newService(cfg.URL, cfg.Identity)
		defer svc.drop()
		if _, err := svc.ctx(ctx); err != nil {
			serviceErr = err
			return
		}
		cfg.Image = testImage()
		b := &Backend{cfg: cfg, svc: svc, log: slog.New(slog.DiscardHandler)}
		b.pull.image = cfg.Image
		if err := b.ensureImage(ctx); err != nil {
			serviceErr = err
		}
	})
	if serviceErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Podman is required on CI (scripts/setup-podman.sh sets it up): %v", serviceErr)
		}
		t.Skipf("no usable Podman service (run scripts/setup-podman.sh as root): %v", serviceErr)
	}
}

// testConfig is the JSON config of a test backend: the test image, a
// prefix of its own, and extra keys.
func testConfig(t testing.TB, extra map[string]any) json.RawMessage {
	t.Helper()
	m := map[string]any{"image": testImage(), "name_prefix": "wai-test"}
	for k, v := range extra {
		m[k] = v
	}
	// Commands go through the agent unless the test turns it off.
	if v, ok := m["agent"]; (!ok || v == true) && m["agent_path"] == nil {
		m["agent_path"] = agentBinary(t)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parsedTestConfig is testConfig as the backend reads it, for tests that
// call the service or a check without a backend.
func parsedTestConfig(t testing.TB, extra map[string]any) Config {
	t.Helper()
	cfg, err := ParseConfig(testConfig(t, extra), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newTestBackend opens a backend with its state in a temporary directory.
func newTestBackend(t testing.TB, l backend.Limits, extra map[string]any) *Backend {
	t.Helper()
	needPodman(t)
	b, err := New(bg, backend.Options{Config: testConfig(t, extra), StateDir: t.TempDir(), Limits: l})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("closing the backend: %v", err)
		}
		// Nothing of this backend's may outlive it.
		cs, err := List(ctx, b.cfg)
		if err != nil {
			t.Errorf("listing containers after Close: %v", err)
		}
		for _, c := range cs {
			if strings.HasPrefix(c.Workspace, b.cfg.WorkspaceDir+"/") && !c.Keep {
				t.Errorf("container %s (session %s, %s) outlived its backend", c.Name, c.Session, c.State)
				_ = b.remove(ctx, c.ID)
			}
		}
	})
	return b
}

// session returns a session name no other test (or run) uses.
func session(prefix string) string { return prefix + "-" + newID()[:10] }

// keptOpener returns a function that opens one kept session (named after
// prefix) on a new Backend each call, all sharing one state directory: a
// session as wai processes one after the other see it. The test closes
// what it opens.
func keptOpener(t *testing.T, prefix string, extra map[string]any) func() (*Backend, *Workspace) {
	t.Helper()
	needPodman(t)
	state, name, cfg := t.TempDir(), session(prefix), testConfig(t, extra)
	return func() (*Backend, *Workspace) {
		t.Helper()
		b, err := New(bg, backend.Options{Config: cfg, StateDir: state})
		if err != nil {
			t.Fatal(err)
		}
		ws, err := b.Open(bg, backend.WorkspaceSpec{Session: name, Keep: true})
		if err != nil {
			t.Fatal(err)
		}
		return b, ws.(*Workspace)
	}
}

// onService starts w's container if it is not running and returns a
// context for the bindings on b's service and the container's ID, for
// tests that act on the container behind the backend's back.
func onService(t testing.TB, b *Backend, w *Workspace) (context.Context, string) {
	t.Helper()
	st, err := w.ensure(bg)
	if err != nil {
		t.Fatal(err)
	}
	return onServiceCtx(t, b.svc), st.id
}

// onServiceCtx is the bindings' context on svc, for tests that ask the
// service directly what the backend did (or plant what it must find).
func onServiceCtx(t testing.TB, svc *service) context.Context {
	t.Helper()
	cctx, err := svc.ctx(bg)
	if err != nil {
		t.Fatal(err)
	}
	return cctx
}

// recordedSession opens a fresh session on a backend configured with
// extra, whose events rec records.
func recordedSession(t testing.TB, extra map[string]any, keep bool) (*Backend, *Workspace, *recorder) {
	t.Helper()
	rec := &recorder{}
	b := newTestBackend(t, backend.Limits{}, extra)
	b.log = slog.New(rec)
	return b, openTest(t, b, keep), rec
}

// openTest opens a fresh session on b.
func openTest(t testing.TB, b *Backend, keep bool) *Workspace {
	t.Helper()
	ws, err := b.Open(bg, backend.WorkspaceSpec{Session: session("t"), Keep: keep})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		_ = ws.Close(ctx)
	})
	return ws.(*Workspace)
}

// waitUntil polls cond until it holds, failing after a minute.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for: %s", what)
		}
	}
}

func run(t testing.TB, w *Workspace, req backend.ExecRequest) backend.ExecResult {
	t.Helper()
	return backendtest.Execute(t, w.Shell(), req)
}

func sh(t testing.TB, w *Workspace, script string) backend.ExecResult {
	t.Helper()
	return run(t, w, backend.ExecRequest{Shell: script})
}

// recorder is a slog handler that keeps event names.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, name)
}

func (r *recorder) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e == name {
			n++
		}
	}
	return n
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, ", ")
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.add(rec.Message)
	if testing.Verbose() && rec.Level >= slog.LevelDebug {
		var b strings.Builder
		rec.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
		println("event", rec.Message, b.String())
	}
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }
