//go:build linux && (amd64 || arm64)

package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

// TestResolvePath: the path a policy is shown is the entry the mutation
// would change, symlinks followed chroot-style, nothing created.
func TestResolvePath(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "protected/f", "secret")
	w.file(t, "plain/g", "")
	w.symlink(t, "protected", "p")
	w.symlink(t, "/protected", "abs")
	w.symlink(t, "../../protected", "plain/up")
	w.symlink(t, "protected/f", "flink")
	w.symlink(t, "protected/deep/new", "dangling")
	w.symlink(t, "/protected/deep/new", "abs-dangling")
	w.symlink(t, "p", "p2") // a chain: p2 -> p -> protected
	w.symlink(t, "../../..", "rootlink")
	for _, c := range []struct {
		path       string
		followLast bool
		want       string
	}{
		{"p/new", true, "protected/new"},
		{"p2/new", true, "protected/new"},
		{"abs/new", true, "protected/new"},
		{"/abs/new", true, "protected/new"},
		{"plain/up/new", true, "protected/new"},
		{"flink", true, "protected/f"},
		{"flink", false, "flink"}, // remove deletes the link, not its target
		{"p/f", false, "protected/f"},
		{"p", false, "p"},
		{"p", true, "protected"},
		{"p/a/b/new", true, "protected/a/b/new"},
		{"missing/a/new", true, "missing/a/new"},
		{"dangling", true, "protected/deep/new"},
		{"plain/../p/x", true, "protected/x"},
		{"plain/g", true, "plain/g"},
		{"", true, "."},
		{"rootlink", true, "."}, // a link to the root, clamped chroot-style
		{"rootlink", false, "rootlink"},
		{"rootlink/x", true, "x"},
	} {
		got, err := w.fs.ResolvePath(ctx, c.path, c.followLast)
		if err != nil || got != c.want {
			t.Errorf("ResolvePath(%q, followLast %v) = %q, %v; want %q", c.path, c.followLast, got, err, c.want)
		}
	}
	for _, p := range []string{"protected/a", "protected/deep", "missing"} {
		if _, err := os.Lstat(filepath.Join(w.root, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("ResolvePath created %s: %v", p, err)
		}
	}
	// An absolute final link whose target the root lacks leads outside.
	_, err := w.fs.ResolvePath(ctx, "abs-dangling", true)
	backendtest.WantKind(t, err, backend.ErrNotFound, "abs-dangling is a symbolic link that leads outside the workspace")
	// Writing through a link to the root is writing to a directory.
	_, err = w.fs.Write(ctx, backend.WriteRequest{Path: "rootlink", Content: "x", Mode: backend.WriteOverwrite})
	backendtest.WantKind(t, err, backend.ErrInvalid, "directory")
	_, err = w.fs.ResolvePath(ctx, "../x", true)
	backendtest.WantKind(t, err, backend.ErrInvalid, "climbs above")
	_, err = w.fs.ResolvePath(ctx, "protected/f/x", true)
	backendtest.WantKind(t, err, backend.ErrInvalid, "not a directory")
	w.untouched(t)
}

// TestResolvedMutationsFollowNoSymlink: a mutation given the resolved path
// a policy judged changes that entry or nothing, even when a symlink is
// swapped onto the path between the check and the change (TOCTOU).
func TestResolvedMutationsFollowNoSymlink(t *testing.T) {
	w := newWorld(t, Options{})
	w.file(t, "protected/f", "secret")
	w.file(t, "allowed/f", "free")
	w.symlink(t, "protected", "p")

	// The happy path: the write lands on the resolved entry; the result
	// names the path asked for.
	res, err := w.fs.Write(ctx, backend.WriteRequest{Path: "p/new", Resolved: "protected/new", Content: "x"})
	if err != nil || res.Path != "p/new" {
		t.Fatalf("Write(p/new, resolved protected/new) = %+v, %v", res, err)
	}
	if data, err := os.ReadFile(filepath.Join(w.root, "protected/new")); err != nil || string(data) != "x" {
		t.Fatalf("protected/new after the write: %q, %v", data, err)
	}

	// A policy judged allowed/...; then allowed became a symlink to
	// protected.
	resolved, err := w.fs.ResolvePath(ctx, "allowed/a/b/new", true)
	if err != nil || resolved != "allowed/a/b/new" {
		t.Fatalf("ResolvePath(allowed/a/b/new) = %q, %v", resolved, err)
	}
	if err := os.Rename(filepath.Join(w.root, "allowed"), filepath.Join(w.root, "was-allowed")); err != nil {
		t.Fatal(err)
	}
	w.symlink(t, "protected", "allowed")
	_, err = w.fs.Write(ctx, backend.WriteRequest{Path: "allowed/a/b/new", Resolved: resolved, Content: "x"})
	backendtest.WantKind(t, err, backend.ErrInvalid, "symlink appeared")
	_, err = w.fs.Write(ctx, backend.WriteRequest{Path: "allowed/f", Resolved: "allowed/f", Content: "x", Mode: backend.WriteOverwrite})
	backendtest.WantKind(t, err, backend.ErrInvalid, "symlink appeared")
	_, err = w.fs.Edit(ctx, backend.EditRequest{Path: "allowed/f", Resolved: "allowed/f", Old: "secret", New: "gone"})
	backendtest.WantKind(t, err, backend.ErrInvalid, "symlink appeared")
	_, err = w.fs.Remove(ctx, backend.RemoveRequest{Path: "allowed/f", Resolved: "allowed/f"})
	backendtest.WantKind(t, err, backend.ErrInvalid, "symlink appeared")
	if _, err := os.Lstat(filepath.Join(w.root, "protected/a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused resolved write created protected/a: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(w.root, "protected/f")); err != nil || string(data) != "secret" {
		t.Errorf("protected/f after refused resolved mutations: %q, %v", data, err)
	}

	// The last element swapped for a symlink: refused too.
	w.file(t, "allowed2/f", "free")
	if err := os.Remove(filepath.Join(w.root, "allowed2/f")); err != nil {
		t.Fatal(err)
	}
	w.symlink(t, "/protected/f", "allowed2/f")
	_, err = w.fs.Write(ctx, backend.WriteRequest{Path: "allowed2/f", Resolved: "allowed2/f", Content: "x", Mode: backend.WriteOverwrite})
	backendtest.WantKind(t, err, backend.ErrInvalid, "symlink appeared")
	_, err = w.fs.Edit(ctx, backend.EditRequest{Path: "allowed2/f", Resolved: "allowed2/f", Old: "secret", New: "gone"})
	backendtest.WantKind(t, err, backend.ErrInvalid, "symlink appeared")
	if data, err := os.ReadFile(filepath.Join(w.root, "protected/f")); err != nil || string(data) != "secret" {
		t.Errorf("protected/f after refused resolved mutations: %q, %v", data, err)
	}
	w.untouched(t)
}
