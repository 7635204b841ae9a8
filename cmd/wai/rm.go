package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

func init() {
	register(&command{
		name:    "rm",
		args:    "[--user NAME] [--force] SESSION…",
		summary: "remove sessions by name: their files, container and records",
		text: `
Removes exactly the named sessions of --user NAME (without it, those opened
without a user), on whichever backend has them: the workspace's files, its
container (Podman) and wai's records of it. wai ps lists the names.

A session a running wai process holds (an MCP client still connected, a
command still running) is never removed, --force or not: its files are in
use, and removing them under a live agent is the silent loss wai exists
to prevent. wai rm names the holding process; end the session there
(close the client, or stop that process) and run wai rm again. The same
holds for what a session made that wai ps lists beside it (container/,
network/ and snapshot/ names): it goes once its session is no longer held.

--force only makes a name no backend knows not an error, as rm -f does.`,
		flags: func(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
			var af adminFlags
			var force bool
			af.register(fs, false)
			fs.BoolVar(&force, "force", false, "a session that does not exist is not an error (a held one is still never removed)")
			return func(ctx context.Context, std stdio, args []string) int {
				if len(args) == 0 {
					fmt.Fprintf(std.err, "wai rm: name at least one session (wai ps lists them)\n")
					return exitError
				}
				return af.run(ctx, std, func(k *host.Kernel) int {
					code := exitOK
					for _, name := range args {
						e, err := k.RemoveSession(ctx, af.scope(), name)
						switch {
						case err == nil:
							fmt.Fprintf(std.out, "removed %s\n", removedEntry(e, name))
						case force && errors.Is(err, backend.ErrNotFound) && !errors.Is(err, backend.ErrUnavailable):
						case ctx.Err() != nil:
							return fail(ctx, std.err, err)
						default:
							// The message says what to do; fail's hints (a
							// policy, a backend) do not fit a refused removal.
							fmt.Fprintf(std.err, "wai rm: %v\n", err)
							code = exitError
						}
					}
					return code
				})
			}
		},
	})
}
