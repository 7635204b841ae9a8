package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Where bundled plugins are looked for: plugin_dir alone when set; else
// $WAI_PLUGIN_DIR before the plugins built into the program, and the
// directories that merely happen to exist after them.
func TestPluginDirs(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no executable path on this platform")
	}
	besideExe := filepath.Join(filepath.Dir(exe), "plugins")
	build := filepath.Join("build", "plugins")

	t.Setenv("WAI_PLUGIN_DIR", "")
	f := Default()
	first, fallback := f.PluginDirs()
	if len(first) != 0 || !slices.Equal(fallback, []string{besideExe, build}) || !f.UsesBuiltInPlugins() {
		t.Errorf("defaults: first %q, fallback %q", first, fallback)
	}

	t.Setenv("WAI_PLUGIN_DIR", "/env/plugins")
	k := f.Kernel()
	if !slices.Equal(k.PluginDirs, []string{"/env/plugins"}) || !slices.Equal(k.FallbackPluginDirs, []string{besideExe, build}) {
		t.Errorf("$WAI_PLUGIN_DIR: kernel dirs %q then %q", k.PluginDirs, k.FallbackPluginDirs)
	}

	f.PluginDir = "/named"
	k = f.Kernel()
	if !slices.Equal(k.PluginDirs, []string{"/named"}) || len(k.FallbackPluginDirs) != 0 || f.UsesBuiltInPlugins() {
		t.Errorf("plugin_dir: kernel dirs %q then %q, built-in used %v", k.PluginDirs, k.FallbackPluginDirs, f.UsesBuiltInPlugins())
	}
}

// Kernel carries where the file's keys are, for a backend's errors; a
// Config built in Go has nothing to point at.
func TestKernelLocatesBackendKeys(t *testing.T) {
	if k := Default().Kernel(); k.Source != "" || k.BackendKeyLine != nil {
		t.Errorf("defaults locate keys: %q, %v", k.Source, k.BackendKeyLine != nil)
	}
	path := filepath.Join(t.TempDir(), "wai.toml")
	if err := os.WriteFile(path, []byte("backend = \"host\"\n\n[backends.host]\nshell = \"/bin/sh\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	k := f.Kernel()
	if k.Source != path || k.BackendKeyLine == nil || k.BackendKeyLine("host", "shell") != 4 || k.BackendKeyLine("host", "nope") != 0 {
		t.Errorf("loaded: source %q, line of shell %v", k.Source, k.BackendKeyLine != nil && k.BackendKeyLine("host", "shell") == 4)
	}
}
