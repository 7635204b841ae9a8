package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wai-dev/wai/host"
)

func init() {
	register(&command{
		name:    "containers",
		args:    "create|exec|ls|rm|cp|snapshot|snapshots|restore|rmsnapshot [flags] …",
		summary: "manage your own containers beside wai's sessions (create, exec, ls, rm, cp)",
		text:    containersHelp,
		flags: func(*flag.FlagSet) func(context.Context, stdio, []string) int {
			return func(ctx context.Context, std stdio, args []string) int {
				return containersMain(ctx, args, std)
			}
		},
	})
}

const containersHelp = `
The containers an agent manages with the containers tool, for a person: the
same kernel path (limits, the policy chain with its container_safety gates,
the backend's hardening), from the command line.

  wai containers create [--name N] [--image I] [--env K=V]… [--passthrough auto|all|none|NAME,…]
                        [--forward-git] [--forward-gh] [--mount HOST:CTR[:rw]]… [--port [HOST:]CTR]…
                        [--network none|NET|bridge] [--memory 4g] [--purpose P]
                        [--dotfiles REPO | --no-dotfiles]
  wai containers exec NAME [--timeout SEC] -- COMMAND…
  wai containers ls [--json]
  wai containers rm [--force] NAME…
  wai containers stop [--force] NAME | start NAME   (stopped, it keeps its files)
  wai containers cp NAME:PATH HOSTPATH | HOSTPATH NAME:PATH
  wai containers snapshot NAME [SNAPSHOT]
  wai containers snapshots [--json]
  wai containers restore SNAPSHOT [create's flags]
  wai containers rmsnapshot SNAPSHOT…
  wai containers net create NAME [--egress] | net rm NAME | net ls
  wai containers compose up FILE [--project P] | compose down [--force] P | compose ps P

Containers made here are persistent (a command-line session ends with the
command): wai containers rm, or wai gc --all, removes them. Snapshots are
images of your own: they stay until rmsnapshot. Every
subcommand takes --config, --backend, --user and -v as wai exec does.`

// containersMain runs `wai containers SUB …`.
func containersMain(ctx context.Context, args []string, std stdio) int {
	stdout, stderr := std.out, std.err
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, strings.TrimSpace(containersHelp))
		return exitError
	}
	sub, rest := args[0], args[1:]
	fs := flag.NewFlagSet("wai containers "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var kf kernelFlags
	kf.register(fs)
	build, asJSON := subcommand(sub, fs)
	if build == nil {
		fmt.Fprintf(stderr, "wai containers: no subcommand %q: use create, exec, ls, rm, stop, start, cp, snapshot, snapshots, restore, rmsnapshot, net or compose\n", sub)
		return exitError
	}
	if err := fs.Parse(interleave(rest)); err != nil {
		return exitError
	}
	targets := fs.Args()
	// rm takes several names: one request each.
	batches := [][]string{targets}
	if (sub == "rm" || sub == "rmsnapshot") && len(targets) > 1 {
		batches = nil
		for _, n := range targets {
			batches = append(batches, []string{n})
		}
	}
	reqs := make([]host.ContainerRequest, 0, len(batches))
	for _, b := range batches {
		req, err := build(b)
		if err != nil {
			fmt.Fprintf(stderr, "wai containers %s: %v\n", sub, err)
			return exitError
		}
		reqs = append(reqs, req)
	}
	k, err := kf.open(ctx, std, stderr, false)
	if err != nil {
		return fail(ctx, stderr, err)
	}
	defer closeKernel(k, stderr)
	// A session of its own, ended with the command: what it creates is
	// persistent, so nothing goes with it.
	s, err := k.Session(ctx, "", host.SessionOptions{})
	if err != nil {
		return fail(ctx, stderr, err)
	}
	code := exitOK
	// A create may build its purpose image (minutes): its steps show on
	// the terminal's status line.
	st := newStatus(stderr, false, std.getenv)
	for _, req := range reqs {
		req.AllSessions = true // the operator reaches every container of the user
		resp, err := s.Containers(st.begin(ctx, "wai containers "+sub), req)
		st.end()
		if err != nil {
			code = max(code, fail(ctx, stderr, err))
			continue
		}
		code = max(code, printContainers(stdout, stderr, sub, *asJSON, resp))
	}
	return code
}

// interleave moves "--" and what follows to the end, keeping flags that
// come after positional arguments (NAME --timeout 5 -- cmd) parseable.
func interleave(args []string) []string {
	var flags, pos, tail []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			tail = append([]string{"--"}, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-"):
			flags = append(flags, a)
			if !strings.Contains(a, "=") && i+1 < len(args) && !isBoolFlag(a) {
				i++
				flags = append(flags, args[i])
			}
		default:
			pos = append(pos, a)
		}
	}
	if len(tail) > 0 {
		return append(append(flags, "--"), append(pos, tail[1:]...)...)
	}
	return append(append(flags, "--"), pos...)
}

func isBoolFlag(a string) bool {
	switch strings.TrimLeft(a, "-") {
	case "v", "json", "force", "forward-git", "forward-gh", "gpu", "egress":
		return true
	}
	return false
}

func cpRequest(a []string) (host.ContainerRequest, error) {
	if len(a) != 2 {
		return host.ContainerRequest{}, errors.New("usage: wai containers cp NAME:PATH HOSTPATH, or HOSTPATH NAME:PATH")
	}
	if name, p, ok := strings.Cut(a[0], ":"); ok && strings.HasPrefix(p, "/") {
		return host.ContainerRequest{Operation: "copy_out", Container: name, ContainerPath: p, HostPath: a[1]}, nil
	}
	if name, p, ok := strings.Cut(a[1], ":"); ok && strings.HasPrefix(p, "/") {
		return host.ContainerRequest{Operation: "copy_in", Container: name, ContainerPath: p, HostPath: a[0]}, nil
	}
	return host.ContainerRequest{}, errors.New("one side must be NAME:/absolute/path in the container")
}

func printContainers(stdout, stderr io.Writer, sub string, asJSON bool, r host.ContainerResponse) int {
	for _, n := range r.Notes {
		fmt.Fprintf(stderr, "wai containers: %s\n", n)
	}
	if p := r.Profile; p != nil {
		fmt.Fprintf(stderr, "wai containers: profile %s (image %s, dotfiles %v)\n", p.Purpose, dash(p.Image), p.Dotfiles)
	}
	std := stdio{out: stdout, err: stderr}
	if asJSON && sub == "snapshots" {
		return writeJSONList(std, r.Snapshots)
	}
	if printSnapshots(stdout, sub, r) {
		return exitOK
	}
	switch {
	case asJSON:
		return writeJSONList(std, r.Containers)
	case r.Exec != nil:
		fmt.Fprint(stdout, r.Exec.Stdout)
		fmt.Fprint(stderr, r.Exec.Stderr)
		if r.Exec.TimedOut {
			fmt.Fprintf(stderr, "wai containers: the command timed out\n")
		}
		return r.Exec.ExitCode
	case sub == "ls":
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tIMAGE\tSTATE\tPERSISTENT\tSESSION\tCREATED")
		for _, c := range r.Containers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\t%s\n", c.Name, c.Image, c.State, c.Persistent, dash(c.Session), c.Created.Format("2006-01-02 15:04"))
		}
		tw.Flush()
	case r.Network != nil || r.Networks != nil || r.Compose != nil || sub == "net":
		printNetworks(stdout, r)
	case r.Copy != nil:
		fmt.Fprintf(stdout, "copied %d file(s), %d bytes\n", r.Copy.Files, r.Copy.Bytes)
	case r.Container != nil:
		verb := map[string]string{"create": "created", "rm": "removed", "stop": "stopped", "start": "started"}[sub]
		fmt.Fprintf(stdout, "%s %s\n", verb, r.Container.Name)
		if line := dotfilesLine(r.Dotfiles); line != "" {
			fmt.Fprintln(stdout, line)
		}
	}
	return exitOK
}

// writeJSONList is writeJSON of a list, [] rather than null when empty.
func writeJSONList[T any](std stdio, l []T) int {
	if l == nil {
		l = []T{}
	}
	return writeJSON(std, l)
}

// subcommand declares SUB's flags and returns its request builder (nil
// for an unknown SUB) and whether to print JSON.
func subcommand(sub string, fs *flag.FlagSet) (func([]string) (host.ContainerRequest, error), *bool) {
	asJSON := new(bool)
	switch sub {
	case "create":
		return createFlags(fs), asJSON
	case "exec":
		timeout := fs.Int("timeout", 300, "seconds before the command is killed")
		return func(a []string) (host.ContainerRequest, error) {
			if len(a) < 2 {
				return host.ContainerRequest{}, errors.New("usage: wai containers exec NAME [--timeout SEC] -- COMMAND…")
			}
			return host.ContainerRequest{Operation: "exec", Container: a[0], Command: strings.Join(a[1:], " "), Timeout: *timeout}, nil
		}, asJSON
	case "ls":
		fs.BoolVar(asJSON, "json", false, "print JSON")
		return func([]string) (host.ContainerRequest, error) {
			return host.ContainerRequest{Operation: "list", AllSessions: true}, nil
		}, asJSON
	case "rm":
		force := fs.Bool("force", false, "kill at once instead of stopping")
		return func(a []string) (host.ContainerRequest, error) {
			if len(a) == 0 {
				return host.ContainerRequest{}, errors.New("name the containers to remove (wai containers ls lists them)")
			}
			return host.ContainerRequest{Operation: "destroy", Container: a[0], Force: *force}, nil
		}, asJSON
	case "stop", "start":
		force := fs.Bool("force", false, "stop: kill at once instead of stopping")
		return func(a []string) (host.ContainerRequest, error) {
			if len(a) != 1 {
				return host.ContainerRequest{}, fmt.Errorf("usage: wai containers %s NAME", sub)
			}
			return host.ContainerRequest{Operation: sub, Container: a[0], Force: *force && sub == "stop"}, nil
		}, asJSON
	case "cp":
		return cpRequest, asJSON
	case "net", "compose":
		return networkFlags(sub, fs), asJSON
	}
	return snapshotSubcommand(sub, fs, asJSON), asJSON
}
