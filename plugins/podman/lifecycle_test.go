//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
)

// containerExists asks the service whether name exists.
func containerExists(t *testing.T, b *Backend, name string) bool {
	t.Helper()
	cctx := onServiceCtx(t, b.svc)
	ok, err := containers.Exists(cctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestLifecycle: lazy creation, Start/State/Stop, Close removing the
// container, the directory and the state file; events for each step.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	b := newTestBackend(t, backend.Limits{}, nil)
	b.log = slog.New(rec)
	ws, err := b.Open(bg, backend.WorkspaceSpec{Session: session("life")})
	if err != nil {
		t.Fatal(err)
	}
	w := ws.(*Workspace)
	if containerExists(t, b, w.ContainerName()) {
		t.Fatalf("Open created the container; it must wait for first use")
	}
	if _, err := os.Stat(w.statePath); err != nil {
		t.Fatalf("no state file after Open: %v", err)
	}
	// The same session opened twice is one workspace.
	again, err := b.Open(bg, backend.WorkspaceSpec{Session: w.session})
	if err != nil || again != ws {
		t.Fatalf("second Open of the session: %v, same workspace %v", err, again == ws)
	}
	if err := again.Close(bg); err != nil {
		t.Fatal(err)
	}
	var lc backend.Lifecycle = w
	st, err := lc.State(bg)
	if err != nil || st.Running || st.Name != w.ContainerName() {
		t.Fatalf("State before use: %+v, %v", st, err)
	}
	st, err = lc.Start(bg)
	if err != nil || !st.Running || st.StartedAt.IsZero() || time.Since(st.StartedAt) > time.Minute {
		t.Fatalf("Start: %+v, %v", st, err)
	}
	res := sh(t, w, "echo hi")
	if res.Stdout != "hi\n" {
		t.Fatalf("exec: %+v", res)
	}
	st, _ = lc.State(bg)
	if st.LastUsedAt.IsZero() || time.Since(st.LastUsedAt) > 10*time.Second {
		t.Errorf("last used %v, want about now", st.LastUsedAt)
	}
	if st, err = lc.Stop(bg); err != nil || st.Running {
		t.Fatalf("Stop: %+v, %v", st, err)
	}
	if containerExists(t, b, w.ContainerName()) {
		t.Errorf("the container exists after Stop")
	}
	// The next command starts a fresh container on the same files.
	if res := sh(t, w, "test -f /tmp/x || echo fresh; ls"); !strings.HasPrefix(res.Stdout, "fresh") {
		t.Errorf("after Stop: %q %q", res.Stdout, res.Stderr)
	}
	if err := ws.Close(bg); err != nil {
		t.Fatal(err)
	}
	if containerExists(t, b, w.ContainerName()) {
		t.Errorf("the container outlived Close")
	}
	if _, err := os.Stat(w.Dir()); !os.IsNotExist(err) {
		t.Errorf("the workspace directory outlived Close: %v", err)
	}
	if _, err := os.Stat(w.statePath); !os.IsNotExist(err) {
		t.Errorf("the state file outlived Close: %v", err)
	}
	if _, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}}); err == nil {
		t.Errorf("Execute after Close succeeded")
	}
	for _, e := range []string{"runtime.podman.created", "runtime.podman.started", "runtime.podman.removed", "runtime.podman.exec"} {
		if rec.count(e) == 0 {
			t.Errorf("no %s event (events: %s)", e, rec)
		}
	}
}

// TestKeepReattach: a kept session leaves its container and files, and a
// later backend (another process, as far as the session is concerned)
// reattaches to both.
func TestKeepReattach(t *testing.T) {
	t.Parallel()
	open := keptOpener(t, "keep", nil)
	b1, w1 := open()
	sh(t, w1, "echo kept >/tmp/t; echo file >f")
	id1 := w1.cur.Load().id
	if err := w1.Close(bg); err != nil {
		t.Fatal(err)
	}
	if err := b1.Close(bg); err != nil {
		t.Fatal(err)
	}
	if !containerExists(t, b1, w1.ContainerName()) {
		t.Fatal("a kept session's container was removed")
	}
	s, _, err := readState(w1.statePath)
	if err != nil || s.Owner != nil || !s.Keep {
		t.Errorf("kept state after Close: %+v, %v; want kept and no owner", s, err)
	}
	rec := &recorder{}
	b2, w2 := open()
	b2.log = slog.New(rec)
	res := sh(t, w2, "cat /tmp/t f")
	if res.Stdout != "kept\nfile\n" {
		t.Errorf("reattached session reads %q (stderr %q), want the same container's files", res.Stdout, res.Stderr)
	}
	if id2 := w2.cur.Load().id; id2 != id1 || rec.count("runtime.podman.reattached") != 1 || rec.count("runtime.podman.created") != 0 {
		t.Errorf("container %s after reattach (was %s), events %s", short(id2), short(id1), rec)
	}
	// Closing without Keep this time removes everything.
	w2.b.mu.Lock()
	w2.keepFlag = false
	w2.b.mu.Unlock()
	if err := w2.Close(bg); err != nil {
		t.Fatal(err)
	}
	if err := b2.Close(bg); err != nil {
		t.Fatal(err)
	}
	if containerExists(t, b2, w2.ContainerName()) {
		t.Errorf("container left after the final Close")
	}
}

// TestIdleAndUptime: the reaper removes an idle container (the workspace
// stays and the next command gets a new container) and one past
// max_uptime.
func TestIdleAndUptime(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		cfg   map[string]any
		event string
	}{
		{"idle", map[string]any{"idle_timeout": "1s"}, "runtime.podman.idle_cleanup"},
		{"uptime", map[string]any{"idle_timeout": "0s", "max_uptime": "3s"}, "runtime.podman.removed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, w, rec := recordedSession(t, c.cfg, false)
			sh(t, w, "echo x >f")
			// Wait for the reaper to take the container the command
			// left: under load, max_uptime may already have taken one
			// while the first command was still starting it, so an
			// event alone does not say the current one is gone.
			deadline := time.Now().Add(15 * time.Second)
			for (w.cur.Load() != nil || rec.count(c.event) == 0) && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			if w.cur.Load() != nil || containerExists(t, b, w.ContainerName()) || rec.count(c.event) == 0 {
				t.Fatalf("the container was not removed (events %s)", rec)
			}
			if res := sh(t, w, "cat f"); res.Stdout != "x\n" {
				t.Errorf("after the reaper: %q %q", res.Stdout, res.Stderr)
			}
			if rec.count("runtime.podman.recreated_after_failure") != 0 {
				t.Errorf("a reaped container counts as a failure: %s", rec)
			}
		})
	}
}

// TestHostMountsHydrate: allowed host paths are copied in before the first
// command, owned by the container user, with include/exclude applied.
func TestHostMountsHydrate(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	src := filepath.Join(root, "proj")
	for p, c := range map[string]string{"a.py": "print(1)\n", "b.txt": "b\n", "sub/c.py": "c\n", ".git/x": "x", "secret.key": "k"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mounts := []map[string]any{{"host_path": src, "mount_path": "src", "include": []string{"**/*.py", "*.txt"}, "exclude": []string{".git"}}}
	b := newTestBackend(t, backend.Limits{}, map[string]any{"host_mounts": mounts, "allowed_host_roots": []string{root}})
	w := openTest(t, b, false)
	res := sh(t, w, "cd src && find . -type f | sort && stat -c %u a.py && cat sub/c.py && echo more >>a.py && cat a.py")
	if want := "./a.py\n./b.txt\n./sub/c.py\n65534\nc\nprint(1)\nmore\n"; res.Stdout != want {
		t.Errorf("hydrated workspace: %q (stderr %q), want %q", res.Stdout, res.Stderr, want)
	}
	// Outside the allowed roots: the session does not open.
	other := t.TempDir()
	b2 := newTestBackend(t, backend.Limits{}, map[string]any{"host_mounts": mounts, "allowed_host_roots": []string{other}})
	if _, err := b2.Open(bg, backend.WorkspaceSpec{Session: session("deny")}); err == nil || !strings.Contains(err.Error(), "allowed_host_roots") {
		t.Errorf("a mount outside allowed_host_roots: %v, want a refusal naming allowed_host_roots", err)
	}
}
