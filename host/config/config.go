package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/wai-dev/wai/host"
)

// File is everything wai.toml can say: the kernel's configuration, and the
// keys only the CLI reads. Default returns the values every key of
// wai.example.toml shows; Load overlays a file on them.
type File struct {
	// Config is what the kernel reads. Kernel completes it with what
	// the file's other keys imply (plugin directories, where keys are).
	host.Config
	// PluginDir is where bundled plugins (*.wasm) are found; "" means
	// $WAI_PLUGIN_DIR, else the plugins built into wai, else <dir of the
	// executable>/plugins, else ./build/plugins (see PluginDirs).
	PluginDir string
	MCP       MCP

	// Path is the file the config was loaded from; empty for defaults.
	Path string

	// env is where the file was loaded: the variables and directory
	// PluginDirs and Kernel resolve defaults with.
	env Env

	// backendLines maps keys inside [backends.NAME] tables to their lines
	// in the file, for the errors of a backend's parser.
	backendLines map[string]int
}

// Default returns the configuration wai runs with when no file says
// otherwise. wai.example.toml shows exactly these values; a test keeps the
// two in step.
func Default() File {
	return File{
		Config: host.DefaultConfig(),
		MCP:    MCP{HTTPAddr: "127.0.0.1:8765", TokenEnv: "WAI_MCP_TOKEN", MaxSessions: DefaultMCPMaxSessions},
	}
}

// Kernel returns the kernel's configuration: Config, with the plugin
// directories the file implies (PluginDirs) and where its keys are, for
// errors. A program built with plugins of its own (host.WithBundledPlugins)
// passes them only when UsesBuiltInPlugins.
func (f File) Kernel() host.Config {
	c := f.Config
	c.PluginDirs, c.FallbackPluginDirs = f.PluginDirs()
	if c.StateDir == "" {
		// Resolved here, not by the kernel from the process's own
		// variables, so a File loaded with another Env keeps its state
		// where that Env says.
		c.StateDir = f.env.stateDir()
	}
	c.Source = f.Path
	if f.MCP.TokenEnv != "" {
		// wai serve's bearer token: never a container's to read.
		c.SecretEnv = append(slices.Clone(c.SecretEnv), f.MCP.TokenEnv)
	}
	if f.backendLines != nil {
		c.BackendKeyLine = f.backendKeyLine
	}
	return c
}

// UsesBuiltInPlugins reports whether the plugins built into the program
// are searched at all: not when plugin_dir names the one place to look.
func (f File) UsesBuiltInPlugins() bool { return f.PluginDir == "" }

// Validate checks the configuration as a whole. Errors wrap
// backend.ErrInvalid and name the key to fix.
func (f File) Validate() error {
	return errors.Join(append([]error{f.Kernel().Validate()}, f.MCP.validate(f.Path)...)...)
}

// PluginDirs returns the directories searched for bundled plugins before
// the ones built into the program, and after them: plugin_dir alone when
// set; else $WAI_PLUGIN_DIR first, and the plugins directory next to the
// executable and ./build/plugins after (variables and ./ as the File's
// Env has them). A directory someone named wins
// over what is built in; what is built in wins over directories that
// merely happen to be there (a stale ./build/plugins of another checkout).
func (f File) PluginDirs() (first, fallback []string) {
	if f.PluginDir != "" {
		return []string{f.PluginDir}, nil
	}
	if d := f.env.getenv("WAI_PLUGIN_DIR"); d != "" {
		first = append(first, f.env.path(d))
	}
	if exe, err := os.Executable(); err == nil {
		fallback = append(fallback, filepath.Join(filepath.Dir(exe), "plugins"))
	}
	return first, append(fallback, f.env.path(filepath.Join("build", "plugins")))
}
