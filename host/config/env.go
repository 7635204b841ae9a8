package config

import (
	"os"
	"path/filepath"
)

// Env is the process state loading a configuration consults: environment
// variables ($XDG_CONFIG_HOME, $HOME, $WAI_PLUGIN_DIR, $XDG_CACHE_HOME) and
// the working directory (./wai.toml, a relative --config, ./build/plugins).
// The zero Env is the process's own. A program that loads configurations
// for others, in one process (a test running the CLI in parallel, a server
// acting for several users), passes theirs instead of changing its own.
type Env struct {
	// Getenv looks a variable up; nil means os.Getenv.
	Getenv func(string) string
	// Dir is the directory relative paths are taken from; "" means the
	// process's working directory.
	Dir string
}

func (e Env) getenv(name string) string {
	if e.Getenv == nil {
		return os.Getenv(name)
	}
	return e.Getenv(name)
}

// path is p taken from e's directory.
func (e Env) path(p string) string {
	if e.Dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.Dir, p)
}

// xdgDir is the XDG base directory $name, else $HOME/fallback, else "".
// $HOME is what os.UserHomeDir reads on Unix, looked up through e.
func (e Env) xdgDir(name, fallback string) string {
	if d := e.getenv(name); d != "" {
		return d
	}
	if home := e.getenv("HOME"); home != "" {
		return filepath.Join(home, fallback)
	}
	return ""
}

// configPaths are the files Load("") tries, in order: ./wai.toml, then
// $XDG_CONFIG_HOME/wai/config.toml (~/.config when unset).
func (e Env) configPaths() []string {
	paths := []string{e.path("wai.toml")}
	if dir := e.xdgDir("XDG_CONFIG_HOME", ".config"); dir != "" {
		paths = append(paths, filepath.Join(dir, "wai", "config.toml"))
	}
	return paths
}

// stateDir is the state directory a file naming none gets:
// $XDG_CACHE_HOME/wai (~/.cache/wai when unset); "" when e has no home
// either, and then the kernel's own default applies (the process's
// $XDG_CACHE_HOME or home), or its advice to set state_dir when it has
// none.
func (e Env) stateDir() string {
	if dir := e.xdgDir("XDG_CACHE_HOME", ".cache"); dir != "" {
		return filepath.Join(dir, "wai")
	}
	return ""
}
