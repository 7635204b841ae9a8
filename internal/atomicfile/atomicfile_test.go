package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, perm := range []os.FileMode{0o600, 0o644} {
		if err := Write(p, []byte("new"), perm); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		fi, _ := os.Stat(p)
		if err != nil || string(got) != "new" || fi.Mode().Perm() != perm {
			t.Fatalf("perm %v: read %q (%v), mode %v", perm, got, err, fi.Mode())
		}
	}
	// A failed write leaves the file as it was and no temporary behind.
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "d"), []byte("x"), 0o600); err == nil {
		t.Fatal("renaming over a directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("left behind: %v", entries)
	}
}
