//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// TestIdleKeepsFiles: idle cleanup of a live session removes its
// container only, never its files, whichever way it runs: the reaper of
// the process holding the session, and the sweep (the one wai gc does)
// run long past every idle_timeout.
func TestIdleKeepsFiles(t *testing.T) {
	t.Parallel()
	b, w, rec := recordedSession(t, map[string]any{"idle_timeout": "1s"}, false)
	sh(t, w, "echo kept >f")
	// The event may be another session's (the sweep logs it too): wait
	// for this session's container to go.
	deadline := time.Now().Add(60 * time.Second)
	for w.cur.Load() != nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if w.cur.Load() != nil {
		t.Fatalf("the idle container was not removed (events %s)", rec)
	}
	// Scoped to this test's configuration, as TestGCAndList's: unscoped,
	// a sweep a day ahead removes other tests' kept sessions (and once
	// took another test's files volume fill container).
	rep, err := gcIn(bg, b.svc, b.cfg, gcScope{ours: true}, time.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range rep.Removed {
		if it.Session == w.session {
			t.Errorf("the sweep removed %s %s of a live session: %s", it.Kind, it.Name, it.Reason)
		}
	}
	if res := sh(t, w, "cat f"); res.Stdout != "kept\n" {
		t.Errorf("after idle cleanup and a sweep the session reads %q (stderr %q), want its file", res.Stdout, res.Stderr)
	}
}

// TestWorkspaceRemovedIsReported: when a live session's workspace is
// removed behind its back (by hand, or by wai gc), the next call says so
// plainly, once, and the session goes on in an empty workspace; it never
// presents an empty workspace as if nothing happened.
func TestWorkspaceRemovedIsReported(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		size   string
		remove func(t *testing.T, w *Workspace)
		want   string
	}{
		{"by hand", "0", func(t *testing.T, w *Workspace) {
			if err := os.RemoveAll(w.dir); err != nil {
				t.Fatal(err)
			}
		}, "by hand or by another program"},
		{"by gc", "16m", func(t *testing.T, w *Workspace) {
			if err := removeWorkspace(w.dir, w.session, w.statePath, removedBy(""), "a test said so"); err != nil {
				t.Fatal(err)
			}
		}, fmt.Sprintf("because wai gc (pid %d) removed it: a test said so", os.Getpid())},
		// A serving process's sweep signs as itself, not as wai gc.
		{"by a sweep", "0", func(t *testing.T, w *Workspace) {
			if err := removeWorkspace(w.dir, w.session, w.statePath, removedBy(sweeper()), "idle"); err != nil {
				t.Fatal(err)
			}
		}, fmt.Sprintf("because the periodic sweep of %s (pid %d) removed it: idle", filepath.Base(os.Args[0]), os.Getpid())},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.size != "0" {
				needRoot(t)
			}
			b := newTestBackend(t, backend.Limits{}, map[string]any{"workspace_size": c.size})
			w := openTest(t, b, false)
			sh(t, w, "echo mine >f")
			c.remove(t, w)
			_, err := w.Shell().Execute(bg, backend.ExecRequest{Shell: "cat f"})
			if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "workspace") ||
				!strings.Contains(err.Error(), "was removed") || !strings.Contains(err.Error(), "starts empty") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("the first call after the workspace was removed: %v; want ErrUnavailable saying it was removed (%q) and the session starts empty", err, c.want)
			}
			// Told once; then an empty workspace that works.
			if res := sh(t, w, "ls -A; echo new >g; cat g"); res.Stdout != "new\n" {
				t.Errorf("the session after the notice: %q (stderr %q), want an empty, working workspace", res.Stdout, res.Stderr)
			}
			if _, err := w.FS().Read(bg, backend.ReadRequest{Path: "g"}); err != nil {
				t.Errorf("host-side read after the notice: %v", err)
			}
		})
	}
}

// TestWorkspaceRemovedHostSide: the host-side file tools notice a removed
// workspace as the shell does.
func TestWorkspaceRemovedHostSide(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, map[string]any{"workspace_size": "0"})
	w := openTest(t, b, false)
	if _, err := w.FS().Write(bg, backend.WriteRequest{Path: "f", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(w.dir); err != nil {
		t.Fatal(err)
	}
	_, err := w.FS().List(bg, ".")
	if err == nil || !strings.Contains(err.Error(), "was removed") {
		t.Fatalf("listing a removed workspace: %v, want the notice", err)
	}
	if l, err := w.FS().List(bg, "."); err != nil || len(l.Entries) != 0 {
		t.Errorf("after the notice: %+v, %v; want an empty workspace", l, err)
	}
}

// TestPerUserWorkspaceDir: workspace_dir "<dir>/{user}" puts each user's
// sessions in a directory of their own, with containers of their own even
// for the same session name; a session without a user is refused. On a
// workspace_dir without {user}, users' sessions of one name are kept apart
// all the same.
func TestPerUserWorkspaceDir(t *testing.T) {
	t.Parallel()
	for _, perUser := range []bool{true, false} {
		t.Run(map[bool]string{true: "per-user", false: "shared"}[perUser], func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			dir, where := root, func(user, name string) string { return filepath.Join(root, "@users", user, name) }
			if perUser {
				dir, where = filepath.Join(root, "{user}"), func(user, name string) string { return filepath.Join(root, user, name) }
			}
			b := newTestBackend(t, backend.Limits{}, map[string]any{"workspace_dir": dir, "workspace_size": "0"})
			name := session("pu")
			_, err := b.Open(bg, backend.WorkspaceSpec{Session: name})
			if perUser && (!errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "user name")) {
				t.Fatalf("a session without a user on a per-user workspace_dir: %v, want ErrInvalid asking for a user name", err)
			}
			var ws []*Workspace
			for _, user := range []string{"alice", "bob"} {
				x, err := b.Open(bg, backend.WorkspaceSpec{Session: name, User: user})
				if err != nil {
					t.Fatal(err)
				}
				w := x.(*Workspace)
				t.Cleanup(func() { _ = w.Close(bg) })
				sh(t, w, "echo "+user+" >who")
				ws = append(ws, w)
			}
			for i, user := range []string{"alice", "bob"} {
				got, err := os.ReadFile(filepath.Join(where(user, name), "who"))
				if err != nil || string(got) != user+"\n" {
					t.Errorf("%s's file: %q, %v", user, got, err)
				}
				if res := sh(t, ws[i], "cat who"); res.Stdout != user+"\n" {
					t.Errorf("%s's session reads %q", user, res.Stdout)
				}
			}
			if ws[0].ContainerName() == ws[1].ContainerName() {
				t.Errorf("two users' sessions share container %s", ws[0].ContainerName())
			}
		})
	}
}

// TestKeptWorkspaceRemovedIsReported: a kept session whose files wai gc
// removed is told so on its first call when it is opened again, rather
// than finding an empty workspace unannounced.
func TestKeptWorkspaceRemovedIsReported(t *testing.T) {
	t.Parallel()
	needPodman(t)
	state := t.TempDir()
	name := session("gone")
	cfg := testConfig(t, map[string]any{"workspace_size": "0"})
	b, err := New(bg, backend.Options{Config: cfg, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(bg) })
	ws, err := b.Open(bg, backend.WorkspaceSpec{Session: name, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	old := ws.(*Workspace)
	sh(t, old, "echo mine >f")
	if err := ws.Close(bg); err != nil {
		t.Fatal(err)
	}
	// What wai gc does to this session once its kept lifetime is over (a
	// real gc --all would sweep the whole machine's sessions).
	if err := b.remove(bg, old.ContainerName()); err != nil {
		t.Fatal(err)
	}
	if err := removeWorkspace(old.dir, old.session, old.statePath, removedBy("")); err != nil {
		t.Fatal(err)
	}
	ws, err = b.Open(bg, backend.WorkspaceSpec{Session: name, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	w := ws.(*Workspace)
	t.Cleanup(func() {
		b.mu.Lock()
		w.keepFlag = false
		b.mu.Unlock()
		_ = w.Close(bg)
	})
	_, err = w.FS().Read(bg, backend.ReadRequest{Path: "f"})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "kept session's workspace was removed at") ||
		!strings.Contains(err.Error(), "wai gc") || !strings.Contains(err.Error(), "starts empty") {
		t.Fatalf("the first call of a kept session gc removed: %v; want it told when and why, and that it starts empty", err)
	}
	if res := sh(t, w, "ls -A; echo ok"); res.Stdout != "ok\n" {
		t.Errorf("after the notice: %q %q", res.Stdout, res.Stderr)
	}
}
