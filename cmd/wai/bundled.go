package main

import (
	"embed"
	"io/fs"
)

// bundledFiles is the bundled folder: its README alone in a plain build,
// plus every bundled plugin when `make build` overlays them in (see
// bundled/README.md).
//
//go:embed bundled
var bundledFiles embed.FS

// bundledPlugins is the plugins built into this binary, NAME.wasm at the
// root; nil when there are none, so the kernel looks only on disk.
func bundledPlugins() fs.FS {
	sub, err := fs.Sub(bundledFiles, "bundled")
	if err != nil {
		return nil
	}
	if m, _ := fs.Glob(sub, "*.wasm"); len(m) == 0 {
		return nil
	}
	return sub
}
