package depcheck

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/wai-dev/wai/internal/filetree"
)

// The CLI links backends with blank imports only: it reaches them through
// the kernel and the optional interfaces of host/backend.
func TestCLIImportsBackendsOnlyBlank(t *testing.T) {
	named, err := CallsBackends(filepath.Join("..", "..", "cmd"), mod)
	if err != nil {
		t.Fatal(err)
	}
	if len(named) > 0 {
		t.Errorf("cmd/* must import backend packages only blank (import _), to link them; named imports: %q", named)
	}
}

func TestCallsBackendsSeesNamedImports(t *testing.T) {
	dir := t.TempDir()
	filetree.Write(t, dir, map[string]string{
		"wai/main.go":   "package main\nimport (\n_ \"" + mod + "/plugins/host\"\n\"" + mod + "/host\"\n)\n",
		"wai/pre.go":    "//go:build linux\n\npackage main\nimport \"" + mod + "/plugins/podman\"\n",
		"wai/alias.go":  "package main\nimport pm \"" + mod + "/plugins/podman/sub\"\n",
		"wai/x_test.go": "package main\nimport \"" + mod + "/plugins/mock\"\n",
	})
	got, err := CallsBackends(dir, mod)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"wai/alias.go: " + mod + "/plugins/podman/sub", "wai/pre.go: " + mod + "/plugins/podman"}
	if !slices.Equal(got, want) {
		t.Errorf("CallsBackends = %q, want %q", got, want)
	}
}
