package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/wai-dev/wai/plugins/podman"
)

func init() {
	register(&command{
		name:    "gc",
		args:    "[--all] [flags]",
		summary: "remove the Podman containers and workspaces that crashed or abandoned sessions left behind",
		text: `
Removes, on the configured Podman service and under the workspace
directory, what no running wai process holds: containers and workspaces of
sessions whose process died, workspace directories without a session, and
kept sessions idle longer than their idle_timeout. A session some wai
process still holds is never touched.

--all also removes kept sessions however recently they were used.`,
		flags: func(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
			var config string
			var all, verbose bool
			fs.StringVar(&config, "config", "", "config `file` (default ./wai.toml, else $XDG_CONFIG_HOME/wai/config.toml)")
			fs.BoolVar(&all, "all", false, "also remove kept sessions that are not in use")
			fs.BoolVar(&verbose, "v", false, "also list what was left alone, and why")
			return func(ctx context.Context, std stdio, args []string) int {
				if len(args) > 0 {
					fmt.Fprintf(std.err, "wai gc: takes no arguments, got %q\n", args)
					return exitError
				}
				cfg, err := loadPodmanConfig(config)
				if err != nil {
					return fail(ctx, std.err, err)
				}
				rep, err := podman.GC(ctx, cfg, all)
				if err != nil {
					return fail(ctx, std.err, err)
				}
				for _, it := range rep.Removed {
					fmt.Fprintf(std.out, "removed %s %s (session %s): %s\n", it.Kind, it.Name, it.Session, it.Reason)
				}
				if verbose {
					for _, it := range rep.Kept {
						fmt.Fprintf(std.out, "kept    %s %s (session %s): %s\n", it.Kind, it.Name, it.Session, it.Reason)
					}
				}
				if len(rep.Removed) == 0 {
					fmt.Fprintf(std.out, "nothing to remove (%d left alone; -v says why)\n", len(rep.Kept))
				}
				for _, e := range rep.Errors {
					fmt.Fprintf(std.err, "wai gc: %v\n", e)
				}
				if len(rep.Errors) > 0 {
					return exitError
				}
				return exitOK
			}
		},
	})
}
