//go:build linux && (amd64 || arm64)

package rootfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

// linkRoot is a workspace with symlinks that lead where the file tools
// cannot follow: out by an absolute path, out by climbing, and to nothing.
func linkRoot(t *testing.T) (*FS, string) {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sub", "ok"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"dlink":   "/etc",          // a directory outside, absolute
		"hn":      "/etc/hostname", // a file outside, absolute
		"sub/up":  "../../outside", // climbing out
		"gone":    "missing/dir",   // inside, but nothing there
		"allowed": "sub/ok",        // a good link, for contrast
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fs.Close() })
	return fs, root
}

// TestBrokenLinkWriteIsFinal: a write under a symlink that leads outside
// is refused once, saying so, not as a race to retry (the kernel's flow:
// ResolvePath, then the write of the resolved path), and nothing is made.
func TestBrokenLinkWriteIsFinal(t *testing.T) {
	fs, root := linkRoot(t)
	for _, c := range []struct{ path, says string }{
		{"dlink/evil", "dlink is a symbolic link that leads outside the workspace (to /etc)"},
		{"dlink/a/b", "use the shell"},
		{"sub/up/x", "sub/up is a symbolic link that climbs out of the workspace (to ../../outside)"},
		{"gone/x", "gone is a symbolic link to missing/dir, which does not exist"},
	} {
		kind := backend.ErrNotFound // final: no "try again"
		_, err := fs.ResolvePath(ctx, c.path, true)
		backendtest.WantKind(t, err, kind, c.says)
		_, err = fs.ResolvePath(ctx, c.path, false) // remove resolves its parents too
		backendtest.WantKind(t, err, kind, c.says)
		_, err = fs.Write(ctx, backend.WriteRequest{Path: c.path, Content: "x"})
		backendtest.WantKind(t, err, kind, c.says)
	}
	if _, err := os.Lstat(filepath.Join(root, "etc")); !os.IsNotExist(err) {
		t.Fatalf("a refused write made etc in the workspace: %v", err)
	}
	// Through a good link the write lands, as before.
	if _, err := fs.Write(ctx, backend.WriteRequest{Path: "allowed/new", Content: "x"}); err != nil {
		t.Fatal(err)
	}
}

// TestWriteThroughOutsideLinkIsRefused: a write or edit of a symlink
// whose target is meant for the real file system and is missing from the
// workspace is refused, saying where the link leads. Following it
// chroot-style made <root>/etc/hostname and reported success, while the
// shell's cat hn still showed the real file. Removing the link itself
// stays possible, and a dangling link that stays inside is written
// through, as open(2) would.
func TestWriteThroughOutsideLinkIsRefused(t *testing.T) {
	fs, root := linkRoot(t)
	for _, c := range []struct{ path, says string }{
		{"hn", "hn is a symbolic link that leads outside the workspace (to /etc/hostname)"},
		{"sub/up", "sub/up is a symbolic link that climbs out of the workspace (to ../../outside)"},
	} {
		_, err := fs.ResolvePath(ctx, c.path, true)
		backendtest.WantKind(t, err, backend.ErrNotFound, c.says)
		_, err = fs.Write(ctx, backend.WriteRequest{Path: c.path, Content: "x", Mode: backend.WriteOverwrite})
		backendtest.WantKind(t, err, backend.ErrNotFound, c.says)
		_, err = fs.Edit(ctx, backend.EditRequest{Path: c.path, Old: "a", New: "b"})
		backendtest.WantKind(t, err, backend.ErrNotFound, c.says)
		if got, err := fs.ResolvePath(ctx, c.path, false); err != nil || got != c.path {
			t.Errorf("ResolvePath(%q) for a remove = %q, %v; want the link itself", c.path, got, err)
		}
	}
	for _, made := range []string{"etc", "outside"} {
		if _, err := os.Lstat(filepath.Join(root, made)); !os.IsNotExist(err) {
			t.Errorf("a refused write made %s in the workspace: %v", made, err)
		}
	}
	if err := os.Symlink("sub/ok/new.txt", filepath.Join(root, "inside")); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Write(ctx, backend.WriteRequest{Path: "inside", Content: "x"}); err != nil {
		t.Fatalf("write through a dangling link inside the workspace: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "sub/ok/new.txt")); err != nil || string(b) != "x" {
		t.Errorf("the link's target holds %q, %v", b, err)
	}
}

// TestBrokenLinkReadSaysWhere: reading, listing or describing through a
// link that leads outside says that, not "no such file": the shell lists
// and reads the same name.
func TestBrokenLinkReadSaysWhere(t *testing.T) {
	fs, _ := linkRoot(t)
	_, err := fs.Read(ctx, backend.ReadRequest{Path: "hn"})
	backendtest.WantKind(t, err, backend.ErrNotFound, "hn is a symbolic link that leads outside the workspace (to /etc/hostname)")
	_, err = fs.Stat(ctx, "dlink/passwd")
	backendtest.WantKind(t, err, backend.ErrNotFound, "dlink is a symbolic link that leads outside")
	_, err = fs.List(ctx, "sub/up")
	backendtest.WantKind(t, err, backend.ErrNotFound, "climbs out of the workspace")
	_, err = fs.Read(ctx, backend.ReadRequest{Path: "gone"})
	backendtest.WantKind(t, err, backend.ErrNotFound, "symbolic link to missing/dir")
	// A path that is plainly missing stays plainly missing.
	_, err = fs.Read(ctx, backend.ReadRequest{Path: "sub/ok/nothing"})
	backendtest.WantKind(t, err, backend.ErrNotFound, "no such file")
	_, err = fs.Remove(ctx, backend.RemoveRequest{Path: "dlink/x"})
	backendtest.WantKind(t, err, backend.ErrNotFound, "leads outside")
}

// TestLinkAppearingIsStillARace: when the policies judged a real directory
// and a symlink (even one leading outside) replaces it before the write,
// the write reports the race: the path it was given was fine when judged.
func TestLinkAppearingIsStillARace(t *testing.T) {
	fs, root := linkRoot(t)
	if err := os.Mkdir(filepath.Join(root, "judged"), 0o755); err != nil {
		t.Fatal(err)
	}
	resolved, err := fs.ResolvePath(ctx, "judged/x", true)
	if err != nil || resolved != "judged/x" {
		t.Fatalf("ResolvePath = %q, %v", resolved, err)
	}
	if err := os.Remove(filepath.Join(root, "judged")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "judged")); err != nil {
		t.Fatal(err)
	}
	_, err = fs.Write(ctx, backend.WriteRequest{Path: "judged/x", Content: "x", Resolved: resolved})
	backendtest.WantKind(t, err, backend.ErrInvalid, "symlink appeared")
}
