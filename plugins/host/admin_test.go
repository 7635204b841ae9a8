//go:build linux && (amd64 || arm64)

package host

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

// adminBackends opens two backends on one state directory: two wai
// processes, as far as the session records go.
func adminBackends(t *testing.T, cfg string) (*Backend, *Backend, string) {
	t.Helper()
	state := t.TempDir()
	open := func() *Backend {
		b, err := New(backend.Options{StateDir: state, Config: json.RawMessage(cfg)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close(bg) })
		return b
	}
	return open(), open(), state
}

// deadHolder describes a process that has exited: what a crashed wai
// leaves in a record.
func deadHolder(t *testing.T) *backend.Holder {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	h := backend.CurrentHolder()
	h.PID, h.Start = cmd.Process.Pid, 1
	return h
}

// plantSession makes a session as a process that died holding it leaves
// it: a root with a file and a record naming the dead process.
func plantSession(t *testing.T, b *Backend, session string, keep bool, lastUse time.Time) string {
	t.Helper()
	root := strings.ReplaceAll(b.cfg.Root, "{session}", session)
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := b.records.update(session, func(sessionRecord, bool) (*sessionRecord, error) {
		return &sessionRecord{Session: session, Root: root, Own: true, Keep: keep, Created: lastUse, Holders: []*backend.Holder{deadHolder(t)}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(b.records.path(session), lastUse, lastUse); err != nil {
		t.Fatal(err)
	}
	return root
}

// Every process sees the host sessions another opened: held ones with
// their holder, kept ones after it let go; a throwaway one leaves nothing
// behind once closed.
func TestHostSessionsListed(t *testing.T) {
	b1, b2, _ := adminBackends(t, `{}`)
	kept, err := b1.Open(bg, backend.WorkspaceSpec{Session: "kept", Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kept.FS().Write(bg, backend.WriteRequest{Path: "f", Content: strings.Repeat("x", 10000)}); err != nil {
		t.Fatal(err)
	}
	tmp, err := b1.Open(bg, backend.WorkspaceSpec{Session: "tmp"})
	if err != nil {
		t.Fatal(err)
	}
	ls := backendtest.Sessions(t, b2)
	k, ok := ls["kept"]
	if !ok || !k.Keep || k.Holder != backend.CurrentHolder().String() || k.Size < 10000 || k.Workspace != kept.(*Workspace).Root() || k.Created.IsZero() {
		t.Fatalf("held kept session as another process lists it: %+v (all: %v)", k, ls)
	}
	if s, ok := ls["tmp"]; !ok || s.Keep || s.Holder == "" {
		t.Fatalf("held throwaway session: %+v", s)
	}
	for _, w := range []backend.Workspace{kept, tmp} {
		if err := w.Close(bg); err != nil {
			t.Fatal(err)
		}
	}
	ls = backendtest.Sessions(t, b2)
	if k := ls["kept"]; k.Holder != "" || !k.Keep {
		t.Errorf("kept session after its holder let go: %+v", k)
	}
	if _, ok := ls["tmp"]; ok {
		t.Errorf("a closed throwaway session is still listed")
	}
}

// wai rm removes a session no one holds, refuses one a live process
// holds (its files intact), and says so of one that does not exist.
func TestHostRemoveSession(t *testing.T) {
	b1, b2, _ := adminBackends(t, `{}`)
	w, err := b1.Open(bg, backend.WorkspaceSpec{Session: "held", Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.FS().Write(bg, backend.WriteRequest{Path: "f", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	_, err = b2.RemoveSession(bg, "held")
	backendtest.WantKind(t, err, backend.ErrPermission, "in use by pid")
	if _, err := w.FS().Stat(bg, "f"); err != nil {
		t.Fatalf("a refused rm touched the held session's files: %v", err)
	}
	dead := plantSession(t, b1, "crashed", true, time.Now())
	si, err := b2.RemoveSession(bg, "crashed")
	if err != nil || si.Workspace != dead {
		t.Fatalf("rm of a session whose holder died: %+v, %v", si, err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("rm left the workspace: %v", err)
	}
	if _, ok := backendtest.Sessions(t, b2)["crashed"]; ok {
		t.Errorf("rm left the record")
	}
	_, err = b2.RemoveSession(bg, "nosuch")
	backendtest.WantKind(t, err, backend.ErrNotFound, "wai ps")
	if _, err := os.Stat(b2.records.path("nosuch")); !os.IsNotExist(err) {
		t.Errorf("rm of a missing session left a record file: %v", err)
	}
	if err := w.Close(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := b2.RemoveSession(bg, "held"); err != nil {
		t.Errorf("rm once the holder let go: %v", err)
	}
}

// wai gc removes what crashed processes left and kept sessions past
// keep_for, never a held one, and only the sessions Match accepts.
func TestHostCollectGarbage(t *testing.T) {
	b1, b2, _ := adminBackends(t, `{"keep_for": "1h"}`)
	held, err := b1.Open(bg, backend.WorkspaceSpec{Session: "held", Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close(bg)
	old := time.Now().Add(-2 * time.Hour)
	crashed := plantSession(t, b1, "crashed", false, time.Now())
	recent := plantSession(t, b1, "recent", true, time.Now())
	stale := plantSession(t, b1, "stale", true, old)
	other := plantSession(t, b1, "other", false, old)
	rep, err := b2.CollectGarbage(bg, backend.GCOptions{Match: func(s string) bool { return s != "other" }})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatal(err, rep.Errors)
	}
	gone := map[string]string{}
	for _, it := range rep.Removed {
		gone[it.Session] = it.Reason
	}
	if len(gone) != 2 || !strings.Contains(gone["crashed"], "which is gone") || !strings.Contains(gone["stale"], "idle") {
		t.Errorf("gc removed %v; want crashed (its holder died) and stale (kept, idle past keep_for)", gone)
	}
	for dir, want := range map[string]bool{crashed: false, stale: false, recent: true, other: true, held.(*Workspace).Root(): true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("after gc, %s exists: %v, want %v", dir, err == nil, want)
		}
	}
	rep, err = b2.CollectGarbage(bg, backend.GCOptions{All: true})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatal(err, rep.Errors)
	}
	if _, err := os.Stat(recent); !os.IsNotExist(err) {
		t.Errorf("gc --all left a kept session no one holds: %v", err)
	}
	if _, err := held.FS().Stat(bg, "."); err != nil {
		t.Errorf("gc --all touched a held session: %v", err)
	}
	if kept := rep.Kept; len(kept) != 1 || kept[0].Session != "held" || !strings.Contains(kept[0].Reason, "in use by") {
		t.Errorf("gc --all left %+v; want only the held session, in use", kept)
	}
}

// Users may not share one root: that would show each user the others'
// files. A root with {user} or {session} keeps them apart.
func TestUsersNeedTheirOwnRoot(t *testing.T) {
	shared := newBackend(t, `{"root": "`+t.TempDir()+`"}`, backend.Limits{})
	_, err := shared.Open(bg, backend.WorkspaceSpec{Session: "s", User: "alice"})
	backendtest.WantKind(t, err, backend.ErrInvalid, "put {user}")
	if w, err := shared.Open(bg, backend.WorkspaceSpec{Session: "s"}); err != nil {
		t.Errorf("a shared root without users: %v", err)
	} else {
		w.Close(bg)
	}
}

// A root removed behind wai's back, even when something makes a new empty
// directory in its place, is reported as gone on the next call of either
// kind, not served as an empty workspace.
func TestRemovedRootSaysSo(t *testing.T) {
	b := newBackend(t, "", backend.Limits{})
	w, err := b.Open(bg, backend.WorkspaceSpec{Session: "s", Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(bg)
	if _, err := w.FS().Write(bg, backend.WriteRequest{Path: "keep.txt", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	root := w.(*Workspace).Root()
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = w.FS().Read(bg, backend.ReadRequest{Path: "keep.txt"})
	backendtest.WantKind(t, err, backend.ErrUnavailable, "workspace "+root+" is gone")
	_, err = w.FS().Write(bg, backend.WriteRequest{Path: "new.txt", Content: "y"})
	backendtest.WantKind(t, err, backend.ErrUnavailable, "start a new session")
	_, err = w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"ls"}})
	backendtest.WantKind(t, err, backend.ErrUnavailable, "is gone")
	if _, err := os.Stat(filepath.Join(root, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a write went into the directory that replaced the root: %v", err)
	}
}
