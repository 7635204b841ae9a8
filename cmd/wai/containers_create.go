package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// createFlags declares create's flags and returns the request builder.
func createFlags(fs *flag.FlagSet) func([]string) (host.ContainerRequest, error) {
	var envs, mounts, ports listFlag
	r := host.ContainerRequest{Operation: "create", Persistent: true}
	fs.StringVar(&r.Name, "name", "", "container `name` (generated when empty)")
	fs.StringVar(&r.Image, "image", "", "`image` (default: the configured one)")
	fs.StringVar(&r.Purpose, "purpose", "", "a profile: python, node, rust, go, general, clean or try-repo (with --repo); flags given win over it")
	fs.StringVar(&r.RepoURL, "repo", "", "--purpose try-repo: the git `URL` (or workspace path) to clone and set up")
	fs.StringVar(&r.Network, "network", "", "none (default: no network), a network net create made, or bridge (a route out: needs containers.allow_network_egress and approval)")
	fs.StringVar(&r.MemoryLimit, "memory", "", "memory limit, like 2g")
	pass := fs.String("passthrough", "auto", "host variables to pass: auto (containers.env_patterns; none by default), all, none, or NAME,NAME… (all and names need approval)")
	fs.BoolVar(&r.ForwardGit, "forward-git", false, "copy your git configuration in")
	fs.BoolVar(&r.ForwardGh, "forward-gh", false, "pass your gh login as GH_TOKEN (needs approval)")
	fs.BoolVar(&r.GPU, "gpu", false, "every NVIDIA GPU of the host (the container_safety policy asks)")
	fs.Var(&envs, "env", "`K=V` to set (repeatable)")
	fs.Var(&mounts, "mount", "`HOST:CTR[:rw]` to mount, read-only unless :rw (repeatable; under allowed_host_roots)")
	fs.Var(&ports, "port", "`[HOST:]CTR` to publish on 127.0.0.1 (repeatable)")
	dotRepo := fs.String("dotfiles", "", "dotfiles `repo` to clone and install (default: [dotfiles] of the config)")
	noDot := fs.Bool("no-dotfiles", false, "apply no dotfiles, not even the configured ones")
	return func(a []string) (host.ContainerRequest, error) {
		if len(a) > 0 {
			return r, fmt.Errorf("takes no arguments, got %q (use --name)", a)
		}
		if *dotRepo != "" || *noDot {
			r.Dotfiles = &host.DotfilesRequest{Repo: *dotRepo, Skip: *noDot}
		}
		off := false
		r.MountCwd = &off
		// The flags given win over the purpose's profile, false ones too.
		r.Given = map[string]bool{}
		fs.Visit(func(f *flag.Flag) { r.Given[strings.ReplaceAll(f.Name, "-", "_")] = true })
		switch *pass {
		case "auto", "all", "none":
			r.EnvPassthrough, _ = json.Marshal(*pass)
		default:
			r.EnvPassthrough, _ = json.Marshal(strings.Split(*pass, ","))
		}
		r.Env = map[string]string{}
		for _, kv := range envs {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return r, fmt.Errorf("--env %q: write K=V", kv)
			}
			r.Env[k] = v
		}
		for _, m := range mounts {
			parts := strings.Split(m, ":")
			if len(parts) < 2 || len(parts) > 3 || len(parts) == 3 && parts[2] != "rw" && parts[2] != "ro" {
				return r, fmt.Errorf("--mount %q: write HOST:CTR or HOST:CTR:rw", m)
			}
			r.Mounts = append(r.Mounts, backend.ContainerMount{HostPath: parts[0], ContainerPath: parts[1], ReadOnly: len(parts) < 3 || parts[2] != "rw"})
		}
		for _, p := range ports {
			hp, cp, ok := strings.Cut(p, ":")
			if !ok {
				hp, cp = "0", p
			}
			h, err1 := strconv.ParseUint(hp, 10, 16)
			c, err2 := strconv.ParseUint(cp, 10, 16)
			if err1 != nil || err2 != nil {
				return r, fmt.Errorf("--port %q: write [HOST:]CTR with port numbers", p)
			}
			r.Ports = append(r.Ports, backend.ContainerPort{HostPort: uint16(h), ContainerPort: uint16(c)})
		}
		return r, nil
	}
}

// dotfilesLine says what a create applied of the dotfiles; a failure is
// in the notes, on stderr.
func dotfilesLine(d *host.DotfilesResult) string {
	switch {
	case d == nil || d.Failed != "" || d.Skipped != "":
		return ""
	case d.Script != "":
		return "dotfiles: ran " + d.Script + " from " + d.Source
	case len(d.Linked) > 0:
		return "dotfiles: linked " + strings.Join(d.Linked, " ") + " from " + d.Source
	case len(d.Inline) > 0:
		return "dotfiles: wrote " + strings.Join(d.Inline, " ")
	}
	return ""
}
