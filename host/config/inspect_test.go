package config_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wai-dev/wai/host/config"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// InspectPlugin reports what a plugin declares and imports without a
// config entry granting it anything.
func TestInspectPlugin(t *testing.T) {
	cfg := config.Default()
	cfg.StateDir = sharedStateDir(t)
	path := filepath.Join(t.TempDir(), "hello.wasm")
	if err := os.WriteFile(path, plugbuild.Build(t, "examples/hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := config.InspectPlugin(context.Background(), cfg.Config, path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "hello" || info.Kind != "tool" || info.ABI != 1 || len(info.SHA256) != 64 ||
		!slices.Equal(info.Capabilities, []string{"shell"}) || !slices.Contains(info.Imports, "wai_shell_exec") ||
		len(info.Tools) != 1 || info.Tools[0].Name != "hello" || info.Tools[0].Annotations == nil || !info.Tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("%+v", info)
	}
	if _, err := config.InspectPlugin(context.Background(), cfg.Config, path+".missing"); err == nil {
		t.Fatal("a missing file must be an error")
	}
}

// sharedStateDir is the state directory package host's tests share, so
// the plugin compilation cache in it serves these tests too; a temporary
// one when there is no user cache directory.
func sharedStateDir(t *testing.T) string {
	if base, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(base, "wai-test", "host-state")
		if os.MkdirAll(dir, 0o700) == nil {
			return dir
		}
	}
	return t.TempDir()
}
