package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

// exitChecksFailed is wai preflight's status when a check failed: the
// checks ran, and the machine is not ready.
const exitChecksFailed = 1

func init() {
	register(&command{
		name:    "preflight",
		noArgs:  true,
		args:    "[flags]",
		summary: "check that this machine can run the backends (Podman), and say how to fix what is missing",
		text: `
Runs the checks of the backends the configuration uses (backend,
fallback, and any with a [backends.NAME] table) and of the default
backend (podman), each with its table. Podman's check what it needs, in order: the podman program, a
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
			return func(ctx context.Context, std stdio, _ []string) int {
				return withConfigKernel(ctx, std, config, func(k *host.Kernel) int {
					return preflight(ctx, std, k, asJSON)
				})
			}
		},
	})
}

// preflight runs k's checks and prints them; it returns exitChecksFailed
// when one failed.
func preflight(ctx context.Context, std stdio, k *host.Kernel, asJSON bool) int {
	checks, errs := k.Preflight(ctx)
	if checks == nil {
		checks = []backend.Check{}
	}
	if asJSON {
		if code := writeJSON(std, checks); code != exitOK {
			return code
		}
	} else {
		printChecks(std.out, checks)
	}
	if code := reportErrs(ctx, std.err, "preflight", errs); code != exitOK {
		return code
	}
	failed := false
	for _, c := range checks {
		failed = failed || c.Status == backend.CheckFail
	}
	if ctx.Err() != nil {
		return fail(ctx, std.err, ctx.Err())
	}
	if failed {
		return exitChecksFailed
	}
	return exitOK
}

// printChecks prints one line per check, and the fix under each that did
// not pass; with checks of several backends, each names its backend.
func printChecks(w io.Writer, checks []backend.Check) {
	if len(checks) == 0 {
		fmt.Fprintln(w, "no linked-in backend has preflight checks")
		return
	}
	several := false
	for _, c := range checks {
		several = several || c.Backend != checks[0].Backend
	}
	for _, c := range checks {
		name := c.Name
		if several {
			name = c.Backend + ": " + name
		}
		fmt.Fprintf(w, "%-4s  %s: %s\n", strings.ToUpper(string(c.Status)), name, oneLine(c.Detail))
		if c.Fix != "" && c.Status != backend.CheckOK {
			fmt.Fprintf(w, "      fix: %s\n", c.Fix)
		}
	}
}
