package filetree

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	root := t.TempDir()
	Write(t, root, map[string]string{"a.txt": "a", "d/e/f.go": "package f\n", "d/g": ""})
	for name, want := range map[string]string{"a.txt": "a", "d/e/f.go": "package f\n", "d/g": ""} {
		p := filepath.Join(root, filepath.FromSlash(name))
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
		if fi, err := os.Stat(p); err != nil {
			t.Error(err)
		} else if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", name, fi.Mode().Perm())
		}
	}
	// An existing file is overwritten, as a test that rewrites one expects.
	File(t, filepath.Join(root, "a.txt"), "again")
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "again" {
		t.Errorf("rewritten file holds %q", got)
	}
}
