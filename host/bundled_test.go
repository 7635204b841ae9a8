package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/wai-dev/wai/host/backend"
)

// Bundled plugins are found in Config.PluginDirs, then in the plugins
// built into the program, then in Config.FallbackPluginDirs.
func TestFindBundledOrder(t *testing.T) {
	named, fallback := t.TempDir(), t.TempDir()
	write := func(dir, name string) {
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(named, "a")
	write(fallback, "a")
	write(fallback, "b")
	write(fallback, "c")
	builtIn := fstest.MapFS{"a.wasm": {Data: []byte("in")}, "b.wasm": {Data: []byte("in")}}
	cfg := Config{PluginDirs: []string{named}, FallbackPluginDirs: []string{fallback}}
	for name, want := range map[string]string{"a": filepath.Join(named, "a.wasm"), "b": "(built in)", "c": filepath.Join(fallback, "c.wasm")} {
		src, err := findBundled(cfg, builtIn, name)
		got := src.Path
		if src.Bytes != nil {
			got = "(built in)"
		}
		if err != nil || got != want {
			t.Errorf("%s: found %q (%v), want %q", name, got, err, want)
		}
	}
	if _, err := findBundled(cfg, builtIn, "d"); !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "make plugins") {
		t.Errorf("a missing plugin: %v", err)
	}
}
