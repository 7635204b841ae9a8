package gittest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The repository has the files in one commit, nested paths included.
func TestRepo(t *testing.T) {
	dir := Repo(t, filepath.Join(t.TempDir(), "r"), map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	out, err := exec.Command("git", "-C", dir, "ls-tree", "-r", "--name-only", "HEAD").CombinedOutput()
	if err != nil {
		t.Fatalf("git ls-tree: %v\n%s", err, out)
	}
	if got := strings.Fields(string(out)); strings.Join(got, " ") != "a.txt sub/b.txt" {
		t.Errorf("committed files: %v", got)
	}
	n, err := exec.Command("git", "-C", dir, "rev-list", "--count", "HEAD").Output()
	if err != nil || strings.TrimSpace(string(n)) != "1" {
		t.Errorf("commits: %q, %v; want 1", n, err)
	}
}
