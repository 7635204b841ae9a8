// Command container_safety is the bundled container_safety policy as a Wasm plugin:
// the safety gates of agent-managed containers (package gates). The host
// runs the same rules in process for the bundled policy; this build is
// what a [[policies]] entry with a path loads.
//
// Config keys (all optional): allow_gpu, allow_host_network,
// allow_sensitive_mounts, allow_ssh_forwarding, allow_env_passthrough_all,
// allow_destroy_all, allow_network_egress, allow_dockerfile_build, allow_env_passthrough_list,
// allow_gh_forwarding, sensitive_mounts, max_containers_per_session, dotfiles_repos, ask (default true:
// ask a person for what needs approval; false denies it). A
// config it cannot read denies every containers action, with the reason.
package main

import (
	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/policies/container_safety/gates"
	"github.com/wai-dev/wai/policies/internal/plugconf"
)

var (
	cfg     gates.Config
	loaded  bool
	loadErr error
)

func check(req pdk.CheckRequest) pdk.Decision {
	if !loaded {
		cfg, loadErr = gates.ParseConfig(plugconf.Object(gates.Keys, pdk.Config))
		loaded = true
	}
	if loadErr != nil {
		return pdk.Deny("%v", loadErr)
	}
	c := req.Container
	if c == nil {
		return pdk.Deny("a containers action without its description: denied")
	}
	v := cfg.Check(gates.Request{Operation: c.Operation, Network: c.Network, MountPaths: c.MountPaths,
		EnvPassthrough: c.EnvPassthrough, ForwardSSH: c.ForwardSSH, ForwardGh: c.ForwardGh, GPU: c.GPU, Count: c.Count, DotfilesRepo: c.DotfilesRepo,
		Egress: c.Egress, DockerfileBuild: c.DockerfileBuild})
	switch {
	case v.Allow:
		return pdk.Allow()
	case v.Ask:
		return pdk.Ask(v.ConfigKey, "%s", v.Reason)
	}
	return pdk.Deny("%s", v.Reason)
}

func init() {
	pdk.Declare("container_safety", "1.0.0")
	pdk.Policy(check, pdk.ActionContainersCreate, pdk.ActionContainersDestroyAll, pdk.ActionContainersRestore,
		pdk.ActionContainersCreateNetwork)
}

func main() {}
