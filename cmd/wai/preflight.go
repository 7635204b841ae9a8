package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/wai-dev/wai/plugins/podman"
)

// exitChecksFailed is wai preflight's status when a check failed: the
// checks ran, and the machine is not ready.
const exitChecksFailed = 1

func init() {
	register(&command{
		name:    "preflight",
		args:    "[flags]",
		summary: "check that this machine can run the Podman backend, and say how to fix what is missing",
		text: `
Checks what the Podman backend needs, in order: the podman program, a
service answering on the configured URL, its API version, an OCI runtime
that works with this host's cgroups, the image, disk space, and finally a
hardened container starting and running a command. Every check that does
not pass comes with a fix. Exits 0 when nothing failed (warnings allowed),
1 when a check failed.`,
		flags: func(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
			var config string
			var asJSON bool
			fs.StringVar(&config, "config", "", "config `file` (default ./wai.toml, else $XDG_CONFIG_HOME/wai/config.toml)")
			fs.BoolVar(&asJSON, "json", false, "print the checks as JSON")
			return func(ctx context.Context, std stdio, args []string) int {
				if len(args) > 0 {
					fmt.Fprintf(std.err, "wai preflight: takes no arguments, got %q\n", args)
					return exitError
				}
				cfg, err := loadPodmanConfig(config)
				if err != nil {
					return fail(ctx, std.err, err)
				}
				checks := podman.Preflight(ctx, cfg)
				failed := false
				for _, c := range checks {
					failed = failed || c.Status == podman.CheckFail
				}
				if asJSON {
					if code := writeJSON(std, checks); code != exitOK {
						return code
					}
				} else {
					for _, c := range checks {
						fmt.Fprintf(std.out, "%-4s  %s: %s\n", strings.ToUpper(string(c.Status)), c.Name, oneLine(c.Detail))
						if c.Fix != "" && c.Status != podman.CheckOK {
							fmt.Fprintf(std.out, "      fix: %s\n", c.Fix)
						}
					}
				}
				if ctx.Err() != nil {
					return fail(ctx, std.err, ctx.Err())
				}
				if failed {
					return exitChecksFailed
				}
				return exitOK
			}
		},
	})
}
