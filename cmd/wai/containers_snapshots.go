package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/wai-dev/wai/host"
)

// snapshotSubcommand declares the snapshot subcommands' flags and
// returns the request builder; nil for a SUB that is none of them.
func snapshotSubcommand(sub string, fs *flag.FlagSet, asJSON *bool) func([]string) (host.ContainerRequest, error) {
	switch sub {
	case "snapshot":
		return func(a []string) (host.ContainerRequest, error) {
			if len(a) < 1 || len(a) > 2 {
				return host.ContainerRequest{}, errors.New("usage: wai containers snapshot CONTAINER [SNAPSHOT]")
			}
			r := host.ContainerRequest{Operation: "snapshot", Container: a[0]}
			if len(a) == 2 {
				r.Snapshot = a[1]
			}
			return r, nil
		}
	case "snapshots":
		fs.BoolVar(asJSON, "json", false, "print JSON")
		return func([]string) (host.ContainerRequest, error) {
			return host.ContainerRequest{Operation: "list_snapshots"}, nil
		}
	case "restore":
		create := createFlags(fs)
		return func(a []string) (host.ContainerRequest, error) {
			if len(a) != 1 {
				return host.ContainerRequest{}, errors.New("usage: wai containers restore SNAPSHOT [create's flags]")
			}
			r, err := create(nil)
			r.Operation, r.Snapshot = "restore", a[0]
			return r, err
		}
	case "rmsnapshot":
		return func(a []string) (host.ContainerRequest, error) {
			if len(a) == 0 {
				return host.ContainerRequest{}, errors.New("name the snapshots to remove (wai containers snapshots lists them)")
			}
			return host.ContainerRequest{Operation: "delete_snapshot", Snapshot: a[0]}, nil
		}
	}
	return nil
}

// printSnapshots prints what a snapshot subcommand did as text (--json
// of snapshots is printContainers'); false when r is not a snapshot
// subcommand's.
func printSnapshots(stdout io.Writer, sub string, r host.ContainerResponse) bool {
	switch sub {
	case "snapshots":
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tCONTAINER\tIMAGE\tSIZE\tCREATED")
		for _, s := range r.Snapshots {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d MB\t%s\n", s.Name, s.Container, s.Image, (s.Size+(1<<20)-1)>>20, s.Created.Format("2006-01-02 15:04"))
		}
		tw.Flush()
	case "snapshot":
		fmt.Fprintf(stdout, "saved snapshot %s (%s)\n", r.Snapshot.Name, r.Snapshot.Image)
	case "rmsnapshot":
		fmt.Fprintf(stdout, "removed snapshot %s\n", r.Snapshot.Name)
	case "restore":
		fmt.Fprintf(stdout, "restored %s\n", r.Container.Name)
	default:
		return false
	}
	return true
}
