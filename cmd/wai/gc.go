package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

func init() {
	register(&command{
		name:    "gc",
		noArgs:  true,
		args:    "[--all] [--user NAME | --all-users] [flags]",
		summary: "remove the sessions that crashed or abandoned wai processes left behind, on every backend",
		text: `
Removes, on every backend the configuration may use (host, and Podman when
configured), what no running wai process holds: sessions whose process
died, Podman workspace directories without a session, and kept sessions
unused for longer than their kept lifetime (the podman backend's
idle_timeout, the host backend's keep_for). A session some wai process
still holds is never touched. On the Podman service it also removes the
files volumes of other wai builds or agent paths that no container uses
(once a day old) and fill containers a killed wai left (once ten minutes
old), whatever the user scope: they belong to no session.

Only the sessions of --user NAME (without it, those opened without a
user) are considered; --all-users considers everyone's.

--all also removes kept sessions however recently they were used.`,
		flags: func(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
			var af adminFlags
			var all bool
			af.register(fs, true)
			fs.BoolVar(&all, "all", false, "also remove kept sessions that are not in use")
			var why bool
			fs.BoolVar(&why, "why", false, "also list what was left alone, and why")
			return func(ctx context.Context, std stdio, _ []string) int {
				return af.run(ctx, std, func(k *host.Kernel) int {
					reps, errs := k.CollectGarbage(ctx, af.scope(), all)
					removed, kept := 0, 0
					for _, rep := range reps {
						for _, it := range rep.Removed {
							fmt.Fprintf(std.out, "removed %s %s %s%s: %s\n", rep.Backend, it.Kind, it.Name, ofSession(it.Session), it.Reason)
						}
						removed += len(rep.Removed)
						kept += len(rep.Kept)
						if why {
							for _, it := range rep.Kept {
								fmt.Fprintf(std.out, "kept    %s %s %s%s: %s\n", rep.Backend, it.Kind, it.Name, ofSession(it.Session), it.Reason)
							}
						}
					}
					switch {
					case removed > 0:
					case why || kept == 0:
						fmt.Fprintf(std.out, "nothing to remove (%d left alone)\n", kept)
					default:
						fmt.Fprintf(std.out, "nothing to remove (%d left alone; --why says why)\n", kept)
					}
					return reportErrs(ctx, std.err, "gc", errs)
				})
			}
		},
	})
}

// ofSession is " (session …)" for an item of a session, and "" for one of
// none (a Podman files volume: the whole service's).
func ofSession(key string) string {
	if key == "" {
		return ""
	}
	return " (" + sessionLabel(key) + ")"
}

// sessionLabel names a session by its user and own name, not the key the
// backend knows it by.
func sessionLabel(key string) string {
	user, name, ok := backend.SplitSessionKey(key)
	switch {
	case !ok:
		return "session " + oneLine(key)
	case user == "":
		return "session " + name
	}
	return fmt.Sprintf("session %s of user %s", name, user)
}
