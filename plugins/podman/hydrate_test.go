package podman

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/rootfs"
	"github.com/wai-dev/wai/internal/filetree"
)

// confined opens dir as the workspace file system hydration writes through.
func confined(t *testing.T, dir string) *rootfs.FS {
	t.Helper()
	fsys, err := rootfs.New(dir, rootfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

func TestMatchGlob(t *testing.T) {
	t.Parallel()
	cases := []struct {
		glob, rel string
		want      bool
	}{
		{"*.py", "a.py", true},
		{"*.py", "sub/a.py", true}, // no "/": base name
		{"sub/*.py", "sub/a.py", true},
		{"sub/*.py", "x/sub/a.py", false},
		{"**/*.py", "a.py", true},
		{"**/*.py", "a/b/c.py", true},
		{"a/**", "a/b/c", true},
		{"a/**/c", "a/c", true},
		{"a/**/c", "a/x/y/c", true},
		{".git", ".git", true},
		{"*.py", "a.txt", false},
	}
	for _, c := range cases {
		if got := matchAny([]string{c.glob}, c.rel); got != c.want {
			t.Errorf("match(%q, %q) = %v, want %v", c.glob, c.rel, got, c.want)
		}
	}
}

func listFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestHydrate(t *testing.T) {
	t.Parallel()
	allowed := t.TempDir()
	outside := t.TempDir()
	src := filepath.Join(allowed, "proj")
	filetree.Write(t, src, map[string]string{"a.py": "a", "b.txt": "b", "d/e.py": "e", "node_modules/m.py": "m", "big.bin": strings.Repeat("x", 5000)})
	filetree.Write(t, outside, map[string]string{"secret": "s"})
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(src, "link.py")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(src, "fifo.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(src, "a.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHydrator([]string{allowed})
	dest := t.TempDir()
	files, n, err := h.run(bg, confined(t, dest), []HostMount{
		{HostPath: src, MountPath: "code", Include: []string{"**/*.py", "*.txt"}, Exclude: []string{"node_modules"}, MaxBytes: 1000},
		{HostPath: filepath.Join(src, "b.txt"), MountPath: "single/b.txt", MaxBytes: 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(listFiles(t, dest), " ")
	if want := "code/a.py code/b.txt code/d/e.py single/b.txt"; got != want || files != 4 || n != 4 {
		t.Errorf("hydrated %q (%d files, %d bytes), want %q: symlinks, FIFOs and excluded dirs must not be copied", got, files, n, want)
	}
	if fi, err := os.Stat(filepath.Join(dest, "code/a.py")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("executable bit lost: %v %v", fi.Mode(), err)
	}

	// Over budget: nothing is copied.
	dest = t.TempDir()
	_, _, err = h.run(bg, confined(t, dest), []HostMount{{HostPath: src, MountPath: "code", MaxBytes: 100}})
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "max_bytes") || len(listFiles(t, dest)) != 0 {
		t.Errorf("over budget: %v, files %v; want ErrInvalid naming max_bytes and nothing copied", err, listFiles(t, dest))
	}
	// Outside the allowed roots, directly or through a symlink.
	if err := os.Symlink(outside, filepath.Join(allowed, "escape")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{outside, filepath.Join(allowed, "escape")} {
		_, _, err = h.run(bg, confined(t, t.TempDir()), []HostMount{{HostPath: p, MountPath: "x", MaxBytes: 1000}})
		if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "allowed_host_roots") {
			t.Errorf("mount of %s: %v, want ErrPermission naming allowed_host_roots", p, err)
		}
	}
}

// TestHydrateSymlinkStaysInside plants, as a process still running in a
// kept session's container could, symlinks in the workspace where the
// mounts go: an intermediate directory and a file's own name pointing out
// of it, by absolute and by relative target. Hydration (wai, as root) must
// resolve them inside the workspace and create nothing outside.
func TestHydrateSymlinkStaysInside(t *testing.T) {
	t.Parallel()
	allowed := t.TempDir()
	src := filepath.Join(allowed, "proj")
	filetree.Write(t, src, map[string]string{"d/e.py": "e", "f.py": "f"})
	outside := t.TempDir()
	ws := t.TempDir()
	// code -> /tmp/.../outside: every file of the mount lands below it.
	if err := os.Symlink(outside, filepath.Join(ws, "code")); err != nil {
		t.Fatal(err)
	}
	// single -> ../../<outside>: a relative climb out of the workspace.
	rel, err := filepath.Rel(ws, outside)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, filepath.Join(ws, "single")); err != nil {
		t.Fatal(err)
	}
	h := newHydrator([]string{allowed})
	_, _, err = h.run(bg, confined(t, ws), []HostMount{
		{HostPath: src, MountPath: "code", MaxBytes: 1000},
		{HostPath: filepath.Join(src, "f.py"), MountPath: "single/sub/f.py", MaxBytes: 1000},
	})
	// Resolved inside the workspace, the links dangle: the copy fails
	// (the session does not open), which is all it may do.
	if err != nil && !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("hydrate: %v, want success or ErrNotFound", err)
	}
	if got := listFiles(t, outside); len(got) != 0 {
		t.Fatalf("hydration followed a planted symlink out of the workspace and created %v in %s", got, outside)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("hydration created directories outside the workspace: %v", ents)
	}
	// A link whose target exists inside the workspace is followed there.
	ws = t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/real", filepath.Join(ws, "code")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.run(bg, confined(t, ws), []HostMount{{HostPath: src, MountPath: "code", MaxBytes: 1000}}); err != nil {
		t.Fatalf("hydrate through an in-workspace link: %v", err)
	}
	if got := strings.Join(listFiles(t, filepath.Join(ws, "real")), " "); got != "d/e.py f.py" {
		t.Errorf("files under real/: %q, want \"d/e.py f.py\"", got)
	}
}
