package config

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/wai-dev/wai/internal/filetree"
)

// LoadIn looks for the file, and resolves every default the environment
// decides, in the Env it is given and never in the process's own: two
// loads with different Envs run side by side in one process.
func TestLoadInUsesItsEnv(t *testing.T) {
	t.Parallel()
	dir, home := t.TempDir(), t.TempDir()
	vars := map[string]string{"HOME": home, "WAI_PLUGIN_DIR": "plugins"}
	env := Env{Getenv: func(k string) string { return vars[k] }, Dir: dir}

	f, err := LoadIn("", env)
	if err != nil || f.Path != "" {
		t.Fatalf("no file: want the defaults, got %q, %v", f.Path, err)
	}
	k := f.Kernel()
	if want := filepath.Join(home, ".cache", "wai"); k.StateDir != want {
		t.Errorf("state dir %q, want %q from $HOME", k.StateDir, want)
	}
	if !slices.Equal(k.PluginDirs, []string{filepath.Join(dir, "plugins")}) || k.FallbackPluginDirs[len(k.FallbackPluginDirs)-1] != filepath.Join(dir, "build", "plugins") {
		t.Errorf("plugin dirs %q then %q, want both under %s", k.PluginDirs, k.FallbackPluginDirs, dir)
	}

	userCfg := filepath.Join(home, ".config", "wai", "config.toml")
	writeConfig(t, userCfg, `backend = "mock"`)
	if f, err = LoadIn("", env); err != nil || f.Path != userCfg || f.Backend != "mock" {
		t.Fatalf("~/.config/wai/config.toml of the Env's $HOME not read: %q %q, %v", f.Path, f.Backend, err)
	}
	vars["XDG_CONFIG_HOME"], vars["XDG_CACHE_HOME"] = filepath.Join(home, "xdg"), filepath.Join(home, "cache")
	writeConfig(t, filepath.Join(home, "xdg", "wai", "config.toml"), `backend = "host"`)
	if f, err = LoadIn("", env); err != nil || f.Backend != "host" || f.Kernel().StateDir != filepath.Join(home, "cache", "wai") {
		t.Fatalf("$XDG_CONFIG_HOME and $XDG_CACHE_HOME of the Env not used: %q %q, %v", f.Path, f.Kernel().StateDir, err)
	}
	writeConfig(t, filepath.Join(dir, "wai.toml"), `backend = "podman"`)
	if f, err = LoadIn("", env); err != nil || f.Backend != "podman" || f.Path != filepath.Join(dir, "wai.toml") {
		t.Fatalf("wai.toml in the Env's directory must win: %q %q, %v", f.Path, f.Backend, err)
	}
	writeConfig(t, filepath.Join(dir, "sub", "named.toml"), `backend = "mock"`)
	if f, err = LoadIn(filepath.Join("sub", "named.toml"), env); err != nil || f.Backend != "mock" {
		t.Fatalf("a relative path is taken from the Env's directory: %q %q, %v", f.Path, f.Backend, err)
	}
}

func writeConfig(t *testing.T, path, content string) {
	t.Helper()
	filetree.File(t, path, content)
}
