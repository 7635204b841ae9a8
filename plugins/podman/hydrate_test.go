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
)

func TestMatchGlob(t *testing.T) {
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

func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
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
	allowed := t.TempDir()
	outside := t.TempDir()
	src := filepath.Join(allowed, "proj")
	tree(t, src, map[string]string{"a.py": "a", "b.txt": "b", "d/e.py": "e", "node_modules/m.py": "m", "big.bin": strings.Repeat("x", 5000)})
	tree(t, outside, map[string]string{"secret": "s"})
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(src, "link.py")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(src, "fifo.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(src, "a.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHydrator([]string{allowed}, nil)
	dest := t.TempDir()
	files, n, err := h.run(bg, dest, []HostMount{
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
	_, _, err = h.run(bg, dest, []HostMount{{HostPath: src, MountPath: "code", MaxBytes: 100}})
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "max_bytes") || len(listFiles(t, dest)) != 0 {
		t.Errorf("over budget: %v, files %v; want ErrInvalid naming max_bytes and nothing copied", err, listFiles(t, dest))
	}
	// Outside the allowed roots, directly or through a symlink.
	if err := os.Symlink(outside, filepath.Join(allowed, "escape")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{outside, filepath.Join(allowed, "escape")} {
		_, _, err = h.run(bg, t.TempDir(), []HostMount{{HostPath: p, MountPath: "x", MaxBytes: 1000}})
		if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "allowed_host_roots") {
			t.Errorf("mount of %s: %v, want ErrPermission naming allowed_host_roots", p, err)
		}
	}
}
