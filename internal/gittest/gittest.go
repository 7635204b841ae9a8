// Package gittest makes git repositories for tests: the profile and
// try-repo tests of the kernel and of the CLI clone them.
package gittest

import (
	"os/exec"
	"testing"

	"github.com/wai-dev/wai/internal/filetree"
)

// Repo makes a git repository at dir holding files (path → content) in
// one commit, and returns dir. It needs git on PATH
// (scripts/setup-podman.sh installs it).
func Repo(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	filetree.Write(t, dir, files)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}
