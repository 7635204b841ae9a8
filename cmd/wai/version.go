package main

import (
	"context"
	"flag"
	"fmt"
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
		summary: "print wai's version, Go version and the backends built in",
		flags: func(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
			return func(_ context.Context, std stdio, args []string) int {
				if len(args) > 0 {
					fmt.Fprintf(std.err, "wai version: takes no arguments, got %q\n", args)
					return exitError
				}
				fmt.Fprintf(std.out, "wai %s (%s %s/%s)\n", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
				fmt.Fprintf(std.out, "backends: %s\n", strings.Join(backend.Registered(), ", "))
				return exitOK
			}
		},
	})
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
