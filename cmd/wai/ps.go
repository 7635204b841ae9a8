package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/plugins/podman"
)

func init() {
	register(&command{
		name:    "ps",
		args:    "[flags]",
		summary: "list the Podman containers wai manages, with session, age and idle time",
		text: `
Lists every container labelled wai.managed=true on the configured Podman
service, whichever wai process created it: its session, state, age, time
since its last command, whether the session is kept, and the wai process
holding it ("-" when none does: a kept session waiting for reuse, or
something a crash left behind, which wai gc removes).`,
		flags: func(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
			var config string
			var asJSON bool
			fs.StringVar(&config, "config", "", "config `file` (default ./wai.toml, else $XDG_CONFIG_HOME/wai/config.toml)")
			fs.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
			return func(ctx context.Context, std stdio, args []string) int {
				if len(args) > 0 {
					fmt.Fprintf(std.err, "wai ps: takes no arguments, got %q\n", args)
					return exitError
				}
				cfg, err := loadPodmanConfig(config)
				if err != nil {
					return fail(ctx, std.err, err)
				}
				cs, err := podman.List(ctx, cfg)
				if err != nil {
					return fail(ctx, std.err, err)
				}
				if asJSON {
					return writeJSON(std, cs)
				}
				printContainers(std.out, cs, time.Now())
				return exitOK
			}
		},
	})
}

// loadPodmanConfig reads the [backends.podman] table of the config file,
// resolved against the config's state directory as the backend would.
func loadPodmanConfig(path string) (podman.Config, error) {
	cfg, err := host.LoadConfig(path)
	if err != nil {
		return podman.Config{}, err
	}
	state, err := cfg.ResolvedStateDir()
	if err != nil {
		return podman.Config{}, err
	}
	var raw json.RawMessage
	if t, ok := cfg.Backends["podman"]; ok {
		if raw, err = json.Marshal(t); err != nil {
			return podman.Config{}, fmt.Errorf("[backends.podman]: %w", err)
		}
	}
	return podman.ParseConfig(raw, state)
}

func printContainers(w io.Writer, cs []podman.Container, now time.Time) {
	if len(cs) == 0 {
		fmt.Fprintln(w, "no wai-managed containers")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSESSION\tSTATE\tAGE\tIDLE\tKEEP\tHELD BY")
	for _, c := range cs {
		idle := "-"
		if !c.LastUsed.IsZero() {
			idle = ago(c.Idle)
		}
		held := "-"
		if c.Owner != "" && c.OwnerAlive {
			held = c.Owner
		} else if c.Owner != "" {
			held = c.Owner + " (gone)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\n", c.Name, c.Session, c.State, ago(now.Sub(c.Created)), idle, c.Keep, held)
	}
	tw.Flush()
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

func writeJSON(std stdio, v any) int {
	enc := json.NewEncoder(std.out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(std.err, "wai: writing JSON: %v\n", err)
		return exitError
	}
	return exitOK
}

// oneLine keeps a table cell on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
