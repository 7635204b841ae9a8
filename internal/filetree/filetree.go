// Package filetree writes small trees of files for tests: a module for
// the dependency checker, a repository to clone, a host directory to copy
// into a workspace. Tests only; it imports only the standard library.
package filetree

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes files (slash-separated path under root → content) with
// mode 0644, creating parent directories (0755) as needed.
func Write(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		File(t, filepath.Join(root, filepath.FromSlash(name)), body)
	}
}

// File writes one file at path with mode 0644, creating its parent
// directories (0755) as needed.
func File(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
