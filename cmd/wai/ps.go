package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

func init() {
	register(&command{
		name:    "ps",
		noArgs:  true,
		args:    "[--user NAME | --all-users] [flags]",
		summary: "list sessions on every backend: user, age, idle time, size on disk and holder",
		text: `
Lists the sessions of every backend the configuration may use (host, and
Podman when configured), whichever wai process opened them: backend,
session name, user, age, time since last use, size on disk, whether it is
kept, the container's state (Podman), and the wai process holding it ("-"
when none does: a kept session waiting for reuse, or something a crash
left behind, which wai gc removes).

Beside the sessions it lists what agents made in them (Podman): managed
containers (container/NAME), networks (network/NAME) and snapshots
(snapshot/NAME). Each is held by the process holding the session that
made it; "-" there means that session is over: wai gc removes such a
container or network unless it is persistent (KEEP true; wai gc --all
or wai rm removes that), and never a snapshot (wai rm does).

Users are kept apart: wai ps shows the sessions of --user NAME (without
it, the sessions opened without a user). --all-users shows everyone's:
users are names wai keeps apart for the agents it serves, not accounts,
and whoever runs wai can read its state directory anyway.

A backend that cannot answer (Podman not running) is reported on stderr
and wai ps exits 2, after listing the others.`,
		flags: func(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
			var af adminFlags
			var asJSON bool
			af.register(fs, true)
			fs.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
			return func(ctx context.Context, std stdio, _ []string) int {
				return af.run(ctx, std, func(k *host.Kernel) int {
					ls, errs := k.ListSessions(ctx, af.scope())
					code := exitOK
					if asJSON {
						if ls == nil {
							ls = []host.SessionEntry{}
						}
						code = writeJSON(std, ls)
					} else {
						printSessions(std.out, ls, time.Now())
					}
					return max(code, reportErrs(ctx, std.err, "ps", errs))
				})
			}
		},
	})
}

// adminFlags are the flags of ps, rm and gc: the kernel's (config,
// backend, user) and whether to see every user's sessions.
type adminFlags struct {
	kernelFlags
	allUsers bool
}

func (a *adminFlags) register(fs *flag.FlagSet, allUsers bool) {
	a.kernelFlags.register(fs)
	if allUsers {
		fs.BoolVar(&a.allUsers, "all-users", false, "every user's sessions, not only --user's")
	}
}

func (a *adminFlags) scope() host.AdminScope {
	return host.AdminScope{User: a.user, AllUsers: a.allUsers}
}

// open builds a kernel for session management: the configuration's
// backends, without tools or policies (nothing runs in a session).
func (a *adminFlags) open(ctx context.Context, std stdio) (*host.Kernel, error) {
	if a.allUsers && a.user != "" {
		return nil, fmt.Errorf("--all-users and --user %s: choose one", a.user)
	}
	stderr := std.err
	cfg, err := loadConfig(std, a.config, a.backend)
	if err != nil {
		return nil, err
	}
	cfg.BundledTools, cfg.Plugins, cfg.Policies, cfg.DefaultPolicies = nil, nil, nil, nil
	cfg.SessionIdleTimeout = 0
	var opts []host.Option
	if a.user != "" {
		opts = append(opts, host.WithUser(a.user))
	}
	if a.verbose {
		opts = append(opts, host.WithLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	return host.New(ctx, cfg.Kernel(), opts...)
}

// withConfigKernel runs fn on the admin kernel of the configuration file
// config (adminFlags.run: its backends, no tools). It is for the commands
// that take only --config, such as wai preflight.
func withConfigKernel(ctx context.Context, std stdio, config string, fn func(*host.Kernel) int) int {
	af := adminFlags{kernelFlags: kernelFlags{config: config}}
	return af.run(ctx, std, fn)
}

// run runs fn on the admin kernel (open) and closes it after; a kernel
// that cannot be opened fails the command with a hint.
func (a *adminFlags) run(ctx context.Context, std stdio, fn func(*host.Kernel) int) int {
	k, err := a.open(ctx, std)
	if err != nil {
		return fail(ctx, std.err, err)
	}
	defer closeKernel(k, std.err)
	return fn(k)
}

// reportErrs prints the backends' failures and returns the exit status
// they call for.
func reportErrs(ctx context.Context, stderr io.Writer, cmd string, errs []error) int {
	if len(errs) == 0 {
		return exitOK
	}
	for _, e := range errs {
		if code := fail(ctx, stderr, fmt.Errorf("%s: %w", cmd, e)); code == exitInterrupted {
			return code
		}
	}
	return exitError
}

func printSessions(w io.Writer, ls []host.SessionEntry, now time.Time) {
	if len(ls) == 0 {
		fmt.Fprintln(w, "no sessions")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tSESSION\tUSER\tAGE\tIDLE\tSIZE\tKEEP\tSTATE\tHELD BY")
	for _, s := range ls {
		age, idle := "-", "-"
		if !s.Created.IsZero() {
			age = ago(now.Sub(s.Created))
		}
		if !s.LastUsed.IsZero() {
			idle = ago(now.Sub(s.LastUsed))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%v\t%s\t%s\n", s.Backend, oneLine(s.Name), dash(s.User), age, idle,
			size(s.Size), s.Keep, dash(s.State), dash(oneLine(s.Holder)))
	}
	tw.Flush()
}

// removedEntry says what wai rm removed, by the name it was given: a
// session and its workspace, or what a session made, as wai gc words it.
func removedEntry(e host.SessionEntry, name string) string {
	kind, own, made := strings.Cut(name, "/")
	if !made {
		return fmt.Sprintf("%s session %s (%s)", e.Backend, oneLine(name), dash(e.Workspace))
	}
	if kind != "snapshot" {
		kind = "managed " + kind
	}
	of := ""
	if e.Session != "" {
		of = ofSession(backend.SessionKey(e.User, e.Session))
	}
	return fmt.Sprintf("%s %s %s%s", e.Backend, kind, oneLine(own), of)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// size renders bytes the way du -h does.
func size(n int64) string {
	if n < 0 {
		return "?"
	}
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%c", float64(n)/float64(div), "KMGTPE"[exp])
}

// ago renders a duration the way ps does: coarse, one or two units.
func ago(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// writeJSON prints v as indented JSON for a command's --json, and returns
// the command's status.
func writeJSON(std stdio, v any) int {
	enc := json.NewEncoder(std.out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // a command line or a schema reads as written
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(std.err, "wai: writing JSON: %v\n", err)
		return exitError
	}
	return exitOK
}

// oneLine keeps a table cell on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
