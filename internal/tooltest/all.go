package tooltest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wai-dev/wai/internal/plugbuild"
)

// AllTools returns the package directories (relative to the module root,
// such as "tools/shell") of every bundled tool plugin: each directory
// under tools/ holding a main package. Tests that must cover every tool
// walk this list, so a tool added later is covered without editing them.
func AllTools(t testing.TB) []string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(root, "tools"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "internal" && isMain(filepath.Join(root, "tools", e.Name())) {
			dirs = append(dirs, "tools/"+e.Name())
		}
	}
	slices.Sort(dirs)
	if len(dirs) == 0 {
		t.Fatal("no tool plugins under tools/")
	}
	return dirs
}

// isMain reports whether dir holds a non-test Go file of package main.
func isMain(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err == nil && (bytes.HasPrefix(b, []byte("package main\n")) || bytes.Contains(b, []byte("\npackage main\n"))) {
			return true
		}
	}
	return false
}

// moduleRoot is the directory of go.mod, found as plugbuild finds it.
var moduleRoot = plugbuild.ModuleRoot
