//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// TestGCKeepsUnreadableState: a session whose state file exists but cannot
// be read is not taken for one whose session is gone. gc keeps its
// container and files, saying why, even a day past every idle_timeout;
// only --all removes it. Before, a corrupt state file made gc delete a
// kept session's files as "no state file".
func TestGCKeepsUnreadableState(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	withCtr, noCtr := openTest(t, b, true), openTest(t, b, true)
	for _, w := range []*Workspace{withCtr, noCtr} {
		sh(t, w, "echo kept >f")
	}
	if _, err := noCtr.Stop(bg); err != nil { // leaves only the directory
		t.Fatal(err)
	}
	for _, w := range []*Workspace{withCtr, noCtr} {
		if err := w.Close(bg); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(w.statePath, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := gcIn(bg, b.svc, b.cfg, gcScope{ours: true}, time.Now().Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*Workspace{withCtr, noCtr} {
		if strings.Contains(names(rep.Removed), w.session) {
			t.Errorf("gc removed a session whose state file it could not read: %s", names(rep.Removed))
		}
		if b, err := os.ReadFile(filepath.Join(w.Dir(), "f")); err != nil || string(b) != "kept\n" {
			t.Errorf("%s's file after gc: %q, %v", w.session, b, err)
		}
		said := false
		for _, it := range rep.Kept {
			said = said || it.Session == w.session && strings.Contains(it.Reason, "state file cannot be read")
		}
		if !said {
			t.Errorf("gc kept %+v, want %s kept saying its state file cannot be read", rep.Kept, w.session)
		}
	}
	if !containerExists(t, b, withCtr.ContainerName()) {
		t.Errorf("gc removed the container of a session whose state file it could not read")
	}
	rep, err = gcIn(bg, b.svc, b.cfg, gcScope{all: true, ours: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*Workspace{withCtr, noCtr} {
		if _, err := os.Stat(w.Dir()); !os.IsNotExist(err) {
			t.Errorf("gc --all left %s (removed %s): %v", w.Dir(), names(rep.Removed), err)
		}
	}
}
