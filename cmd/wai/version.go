package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// version is set at build time by the Makefile:
// -ldflags "-X main.version=$(git describe --tags --always --dirty)".
var version string

func init() {
	register(&command{
		name:    "version",
		noArgs:  true,
		summary: "print wai's version, Go version and the backends built in",
		text: `
Prints wai's version (the git revision it was built from when no release
tag names it), the Go version and platform it was built with, the backends
compiled in (podman needs the Makefile's build tags), and where the bundled
plugins come from (embedded in the binary, or looked up on disk).
` + "`wai --version`" + ` and ` + "`wai -V`" + ` print the same.`,
		flags: func(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
			return func(_ context.Context, std stdio, _ []string) int {
				fmt.Fprintf(std.out, "wai %s (%s %s/%s)\n", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
				fmt.Fprintf(std.out, "backends: %s\n", strings.Join(backend.Registered(), ", "))
				fmt.Fprintf(std.out, "bundled plugins: %s\n", bundledSummary())
				return exitOK
			}
		},
	})
}

// bundledSummary names the plugins built into this binary, or says they
// are looked up on disk.
func bundledSummary() string {
	fsys := bundledPlugins()
	if fsys == nil {
		return "none built in (a plain go build): looked up in plugin_dir, $WAI_PLUGIN_DIR, <exe dir>/plugins, ./build/plugins"
	}
	names, _ := fs.Glob(fsys, "*.wasm")
	for i, n := range names {
		names[i] = strings.TrimSuffix(n, ".wasm")
	}
	return "built in: " + strings.Join(names, ", ")
}

// versionString prefers the version stamped by the build; a plain `go
// build` or `go install` still says something useful from the build info:
// the module version, else the VCS revision the go command recorded.
func versionString() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev != "" {
		return "devel-" + rev[:min(12, len(rev))] + dirty
	}
	return "devel"
}
