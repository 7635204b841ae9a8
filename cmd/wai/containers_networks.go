package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wai-dev/wai/host"
)

// networkFlags declares the flags of `wai containers net …` and
// `wai containers compose …` and returns the request builder. What they
// make is persistent, as create's containers are: a command-line session
// ends with the command.
func networkFlags(sub string, fs *flag.FlagSet) func([]string) (host.ContainerRequest, error) {
	egress := fs.Bool("egress", false, "net create: a route out (needs containers.allow_network_egress)")
	project := fs.String("project", "", "compose up: the project name (default: the file's name key or directory)")
	force := fs.Bool("force", false, "compose down: kill at once instead of stopping")
	usage := map[string]string{
		"net":     "usage: wai containers net create NAME [--egress] | net rm NAME | net ls",
		"compose": "usage: wai containers compose up FILE [--project P] | compose down [--force] PROJECT | compose ps PROJECT",
	}[sub]
	return func(a []string) (host.ContainerRequest, error) {
		verb, arg := "", ""
		if len(a) > 0 {
			verb = a[0]
		}
		if len(a) == 2 {
			arg = a[1]
		}
		switch {
		case sub == "net" && verb == "ls" && len(a) == 1:
			return host.ContainerRequest{Operation: "list_networks", AllSessions: true}, nil
		case arg == "":
		case sub == "net" && verb == "create":
			return host.ContainerRequest{Operation: "create_network", Name: arg, Egress: *egress, Persistent: true}, nil
		case sub == "net" && verb == "rm":
			return host.ContainerRequest{Operation: "destroy_network", Network: arg}, nil
		case sub == "compose" && verb == "up":
			off := false
			return host.ContainerRequest{Operation: "compose_up", File: arg, Project: *project, Persistent: true, MountCwd: &off}, nil
		case sub == "compose" && verb == "down":
			return host.ContainerRequest{Operation: "compose_down", Project: arg, Force: *force}, nil
		case sub == "compose" && verb == "ps":
			return host.ContainerRequest{Operation: "compose_status", Project: arg}, nil
		}
		return host.ContainerRequest{}, errors.New(usage)
	}
}

// printNetworks prints what a net or compose subcommand answered.
func printNetworks(stdout io.Writer, r host.ContainerResponse) {
	switch {
	case r.Operation == "create_network":
		fmt.Fprintf(stdout, "created network %s\n", r.Network.Name)
	case r.Operation == "destroy_network":
		fmt.Fprintf(stdout, "removed network %s\n", r.Network.Name)
	case r.Operation == "list_networks":
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tINTERNAL\tPERSISTENT\tSESSION\tCONTAINERS")
		for _, n := range r.Networks {
			fmt.Fprintf(tw, "%s\t%v\t%v\t%s\t%s\n", n.Name, n.Internal, n.Persistent, dash(n.Session), dash(strings.Join(n.Containers, ",")))
		}
		tw.Flush()
	case r.Compose != nil:
		if r.Operation == "compose_down" {
			fmt.Fprintf(stdout, "removed project %s\n", r.Compose.Project)
			return
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "PROJECT %s\tNETWORK %s\n", r.Compose.Project, r.Compose.Network)
		fmt.Fprintln(tw, "SERVICE\tCONTAINER\tIMAGE\tSTATE")
		for _, s := range r.Compose.Services {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Service, s.Container, s.Image, s.State)
		}
		tw.Flush()
	}
}
