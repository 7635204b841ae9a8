package host

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/internal/wasm"
)

// WithBundledPlugins adds fsys as a place the bundled plugins (NAME.wasm
// at its root) are found. cmd/wai passes the plugins embedded in its own
// binary, so a wai copied anywhere carries them.
//
// Search order: Config.PluginDirs, then fsys, then
// Config.FallbackPluginDirs. A directory someone named wins over what is
// built in; what is built in wins over directories that merely happen to
// be there (a stale ./build/plugins of another checkout, say).
func WithBundledPlugins(fsys fs.FS) Option {
	return func(o *options) { o.bundled = fsys }
}

// maxBundledBytes bounds one embedded module: the same order as the
// runtime's own cap for files, so a corrupt FS cannot make wai read
// without end.
const maxBundledBytes = 64 << 20

// findBundled finds NAME.wasm in the directories and embedded plugins, in
// the order WithBundledPlugins documents.
func findBundled(cfg Config, embedded fs.FS, name string) (wasm.Source, error) {
	file := name + ".wasm"
	fromDir := func(d string) (wasm.Source, bool) {
		p := filepath.Join(d, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return wasm.Source{Path: p, Bundled: true, Name: name}, true
		}
		return wasm.Source{}, false
	}
	for _, d := range cfg.PluginDirs {
		if src, ok := fromDir(d); ok {
			return src, nil
		}
	}
	if embedded != nil {
		data, err := readEmbedded(embedded, file)
		switch {
		case err == nil:
			return wasm.Source{Bytes: data, Bundled: true, Name: name}, nil
		case !errors.Is(err, fs.ErrNotExist):
			return wasm.Source{}, backend.Errorf(backend.ErrUnavailable, "config", "", "bundled plugin %s built into wai: %v", file, err)
		}
	}
	for _, d := range cfg.FallbackPluginDirs {
		if src, ok := fromDir(d); ok {
			return src, nil
		}
	}
	dirs := append(slices.Clip(cfg.PluginDirs), cfg.FallbackPluginDirs...)
	where := "in " + quoteList(dirs)
	if embedded != nil || len(cfg.FallbackPluginDirs) > 0 {
		where = "built into this wai binary (it was built without `make build`), nor " + where
	}
	return wasm.Source{}, backend.Errorf(backend.ErrUnavailable, "config", "",
		"bundled plugin %s is not %s: build wai with `make build` (bin/wai then carries its plugins), "+
			"or run `make plugins` and set plugin_dir (or $WAI_PLUGIN_DIR) to build/plugins, or remove %q from bundled_tools",
		file, where, name)
}

func readEmbedded(fsys fs.FS, file string) ([]byte, error) {
	fi, err := fs.Stat(fsys, file)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxBundledBytes {
		return nil, backend.Errorf(backend.ErrInvalid, "config", file, "not a regular file of at most %d MiB", maxBundledBytes>>20)
	}
	return fs.ReadFile(fsys, file)
}

func quoteList(dirs []string) string {
	out := "["
	for i, d := range dirs {
		if i > 0 {
			out += " "
		}
		out += d
	}
	return out + "]"
}
