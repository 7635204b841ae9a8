// Package gates is the decision logic of the container_safety policy, in plain
// Go so the Wasm plugin (policies/container_safety) and the host's in-process
// copy share it.
//
// What needs a person's approval — a GPU, a sensitive mount, ssh keys
// forwarded, host credentials passed in (env_passthrough "all" or a list
// of names, forward_gh's token), a route out (network "bridge", a network
// with egress), a Dockerfile build and destroy_all — is an ask (the kernel asks a person, or denies with the reason and the config
// key that allows it when nobody can be asked); with ask = false it is
// denied outright. The host network is denied, never asked: the podman
// backend refuses it whatever a policy says, so approving it would be a
// lie. Creates past max_containers_per_session are denied: a limit, not an
// approval.
package gates

import (
	"fmt"
	"path"
	"strings"

	"github.com/wai-dev/wai/policies/internal/plugconf"
)

// Config is the policy's table: [[policies]] name = "container_safety".
type Config struct {
	AllowGPU               bool `json:"allow_gpu"`
	AllowHostNetwork       bool `json:"allow_host_network"`
	AllowSensitiveMounts   bool `json:"allow_sensitive_mounts"`
	AllowSSHForwarding     bool `json:"allow_ssh_forwarding"`
	AllowEnvPassthroughAll bool `json:"allow_env_passthrough_all"`
	// AllowEnvPassthroughList allows an env_passthrough list of host
	// variable names; AllowGhForwarding forward_gh (the host's gh token).
	AllowEnvPassthroughList bool     `json:"allow_env_passthrough_list"`
	AllowGhForwarding       bool     `json:"allow_gh_forwarding"`
	AllowDestroyAll         bool     `json:"allow_destroy_all"`
	AllowNetworkEgress      bool     `json:"allow_network_egress"`
	AllowDockerfileBuild    bool     `json:"allow_dockerfile_build"`
	SensitiveMounts         []string `json:"sensitive_mounts"` // added to DefaultSensitiveMounts
	MaxContainers           int      `json:"max_containers_per_session"`
	// Ask, when true (the default), asks a person to approve what needs
	// approval; false denies it outright.
	Ask *bool `json:"ask"`
	// DotfilesRepos, when set, are the only dotfiles repositories a
	// create may clone (prefixes; see dotfiles.go). Unset: any.
	DotfilesRepos []string `json:"dotfiles_repos"`
}

// Keys are the config keys, for the Wasm plugin's config reader.
var Keys = []string{"allow_gpu", "allow_host_network", "allow_sensitive_mounts", "allow_ssh_forwarding",
	"allow_env_passthrough_all", "allow_destroy_all", "sensitive_mounts", "max_containers_per_session", "ask", "dotfiles_repos",
	"allow_network_egress", "allow_dockerfile_build", "allow_env_passthrough_list", "allow_gh_forwarding"}

// DefaultSensitiveMounts are host paths a mount of needs approval. "/**"
// marks a whole subtree; other entries match that exact directory, so
// /home/me/project is ordinary while /home is not.
var DefaultSensitiveMounts = []string{"/", "/etc/**", "/var", "/root/**", "/home"}

// DefaultMaxContainers is max_containers_per_session's default.
const DefaultMaxContainers = 10

// ParseConfig reads the policy's config strictly.
func ParseConfig(raw []byte) (Config, error) {
	c := Config{MaxContainers: DefaultMaxContainers}
	if err := plugconf.Decode(raw, &c); err != nil {
		return c, fmt.Errorf("container_safety policy config: %v (keys: %s)", err, strings.Join(Keys, ", "))
	}
	if c.MaxContainers <= 0 {
		return c, fmt.Errorf("container_safety policy config: max_containers_per_session must be at least 1")
	}
	for _, m := range c.SensitiveMounts {
		if !strings.HasPrefix(m, "/") {
			return c, fmt.Errorf("container_safety policy config: sensitive_mounts entry %q must be an absolute path", m)
		}
	}
	for _, p := range c.DotfilesRepos {
		if p == "" {
			return c, fmt.Errorf("container_safety policy config: dotfiles_repos has an empty entry (it would allow every repository)")
		}
	}
	return c, nil
}

// Request is what the policy looks at: the kernel's ContainerCheck.
type Request struct {
	Operation      string   `json:"operation"`
	Network        string   `json:"network"`
	MountPaths     []string `json:"mount_paths"`
	EnvPassthrough string   `json:"env_passthrough"`
	ForwardSSH     bool     `json:"forward_ssh"`
	ForwardGh      bool     `json:"forward_gh"`
	GPU            bool     `json:"gpu"`
	Count          int      `json:"count"`
	DotfilesRepo   string   `json:"dotfiles_repo"`
	Egress         bool     `json:"egress"`
	// DockerfileBuild: a try-repo create that may build the repository's
	// Dockerfile.
	DockerfileBuild bool `json:"dockerfile_build"`
}

// Verdict is the policy's answer: allow, deny, or (Ask) ask a person.
// ConfigKey names the key that allows the action without asking.
type Verdict struct {
	Allow     bool
	Ask       bool
	Reason    string
	ConfigKey string
}

var allowed = Verdict{Allow: true}

// Check decides one containers.* action.
func (c Config) Check(r Request) Verdict {
	ask := func(what, key string) Verdict {
		if c.Ask == nil || *c.Ask {
			return Verdict{Ask: true, ConfigKey: key, Reason: fmt.Sprintf("%s needs a person's approval", what)}
		}
		return Verdict{ConfigKey: key, Reason: fmt.Sprintf("%s needs a person's approval, and the container_safety policy's config "+
			"has ask = false: denied. To allow it, set %s = true in the container_safety policy's config: take \"container_safety\" "+
			"out of default_policies and add [[policies]] name = \"container_safety\" with config = { %s = true }", what, key, key)}
	}
	switch r.Operation {
	case "destroy_all":
		if !c.AllowDestroyAll {
			return ask("destroy_all (it removes every container of the session)", "allow_destroy_all")
		}
		return allowed
	case "create_network":
		// The backend's allow_network_egress decides whether egress can
		// be had at all; a person approves each network that gets it.
		if r.Egress && !c.AllowNetworkEgress {
			return ask("a network with egress (its containers reach outside)", "allow_network_egress")
		}
		return allowed
	case "create", "restore": // a restore is a create from a snapshot
	default:
		return allowed
	}
	switch {
	case r.GPU && !c.AllowGPU:
		return ask("a GPU", "allow_gpu")
	case r.Network == "host" && !c.AllowHostNetwork:
		return Verdict{ConfigKey: "allow_host_network", Reason: "the host network is denied: the podman backend refuses it " +
			"whatever a policy says (allow_host_network = true only lets a backend that accepts it be asked)"}
	case r.Network == "bridge" && !c.AllowNetworkEgress:
		// A create gets no network by default; "bridge" routes out.
		return ask("network \"bridge\" (the container reaches outside)", "allow_network_egress")
	case r.ForwardSSH && !c.AllowSSHForwarding:
		return ask("forwarding ~/.ssh (private keys)", "allow_ssh_forwarding")
	case r.EnvPassthrough == "all" && !c.AllowEnvPassthroughAll:
		return ask("env_passthrough = \"all\" (every host variable)", "allow_env_passthrough_all")
	case r.EnvPassthrough == "list" && !c.AllowEnvPassthroughList:
		return ask("env_passthrough naming host variables (their values go into the container)", "allow_env_passthrough_list")
	case r.ForwardGh && !c.AllowGhForwarding:
		return ask("forward_gh (the host's GitHub token goes into the container)", "allow_gh_forwarding")
	case r.DockerfileBuild && !c.AllowDockerfileBuild:
		return ask("a Dockerfile build (it runs the repository's RUN steps in a build container)", "allow_dockerfile_build")
	}
	if !c.AllowSensitiveMounts {
		for _, p := range r.MountPaths {
			if s := c.sensitive(p); s != "" {
				return ask(fmt.Sprintf("mounting %s (sensitive: %s)", p, s), "allow_sensitive_mounts")
			}
		}
	}
	if v, denied := c.dotfiles(r.DotfilesRepo); denied {
		return v
	}
	if r.Count >= c.MaxContainers {
		return Verdict{ConfigKey: "max_containers_per_session", Reason: fmt.Sprintf("the session has %d containers, the most max_containers_per_session (%d) allows: destroy one first, "+
			"or raise max_containers_per_session in the container_safety policy's config", r.Count, c.MaxContainers)}
	}
	return allowed
}

// sensitive returns the entry p matches, or "".
func (c Config) sensitive(p string) string {
	p = path.Clean("/" + strings.TrimPrefix(p, "/"))
	for _, s := range append(append([]string{}, DefaultSensitiveMounts...), c.SensitiveMounts...) {
		if tree, ok := strings.CutSuffix(s, "/**"); ok {
			tree = path.Clean(tree)
			if p == tree || strings.HasPrefix(p, tree+"/") {
				return s
			}
			continue
		}
		if p == path.Clean(s) {
			return s
		}
	}
	return ""
}
