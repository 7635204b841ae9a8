//go:build linux && (amd64 || arm64)

package rootfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

// TestCopyIn: a streamed copy lands confined like Write (symlinks in the
// path, absolute or climbing, resolve inside the root), with its exact
// mode, parents made, and never over an existing entry.
func TestCopyIn(t *testing.T) {
	w := newWorld(t, Options{})
	w.symlink(t, w.outside, "abs")          // an intermediate link out, absolute
	w.symlink(t, "../../outside", "up/rel") // and climbing
	for _, p := range []string{"abs/x/f", "up/rel/f", "plain/deep/f"} {
		n, err := w.fs.CopyIn(ctx, p, strings.NewReader("data"), 0o755)
		if err != nil && !strings.Contains(err.Error(), "no such file") {
			t.Fatalf("CopyIn %s: %v", p, err)
		}
		if err == nil && n != 4 {
			t.Errorf("CopyIn %s: %d bytes, want 4", p, n)
		}
	}
	w.untouched(t)
	fi, err := os.Stat(filepath.Join(w.root, "plain/deep/f"))
	if err != nil || fi.Mode() != 0o755 {
		t.Errorf("plain/deep/f: %v, %v; want mode 0755 exactly", fi, err)
	}
	_, err = w.fs.CopyIn(ctx, "plain/deep/f", strings.NewReader("again"), 0o644)
	backendtest.WantKind(t, err, backend.ErrExist, "already exists")
	_, err = w.fs.CopyIn(ctx, "../escape", strings.NewReader("x"), 0o644)
	backendtest.WantKind(t, err, backend.ErrInvalid, "climbs above")
	// A symlink as the final name is followed inside the root; one meant
	// for the real file system, whose target the root lacks, is refused.
	w.symlink(t, "target", "link")
	if _, err := w.fs.CopyIn(ctx, "link", strings.NewReader("t"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(w.root, "target")); err != nil || string(b) != "t" {
		t.Errorf("through a final symlink: %q, %v; want the file at the link's target inside the root", b, err)
	}
	w.symlink(t, "/abs-target", "abs-link")
	_, err = w.fs.CopyIn(ctx, "abs-link", strings.NewReader("t"), 0o644)
	backendtest.WantKind(t, err, backend.ErrNotFound, "leads outside the workspace (to /abs-target)")
	w.untouched(t)
}

// TestReopen: after the root directory is removed and made again, the FS
// reaches the new one.
func TestReopen(t *testing.T) {
	w := newWorld(t, Options{})
	if err := os.RemoveAll(w.root); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(w.root, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := w.fs.Write(ctx, backend.WriteRequest{Path: "f", Content: "x"}); err == nil {
		t.Fatal("a write into the removed root succeeded")
	}
	if err := w.fs.Reopen(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.fs.Write(ctx, backend.WriteRequest{Path: "f", Content: "x"}); err != nil {
		t.Fatalf("after Reopen: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.root, "f")); err != nil {
		t.Error(err)
	}
}
