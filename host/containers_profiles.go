package host

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// PurposeTryRepo is the purpose that picks another one from a repository
// (repo_url): see detectPurpose.
const PurposeTryRepo = "try-repo"

// ContainerProfile is what a purpose means for a create: the image recipe
// it runs, the setup, the environment and the forwarding defaults. A
// profile only fills in what the request did not give (ContainerRequest.given).
type ContainerProfile struct {
	Name string `json:"name"`
	// ImagePurpose names the image recipe (scripts/images/wai-PURPOSE.packages)
	// whose image the container runs: its packages are the profile's
	// packages, installed when the image is built, since a container has no
	// package mirror to install from.
	ImagePurpose  string            `json:"image_purpose"`
	SetupCommands []string          `json:"setup_commands,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	ForwardGit    bool              `json:"forward_git"`
	ForwardGh     bool              `json:"forward_gh"`
	ForwardSSH    bool              `json:"forward_ssh"`
	// Dotfiles: apply the user's dotfiles (when configured) to the container.
	Dotfiles bool `json:"dotfiles"`
}

// containerProfiles is the one table of purposes. Forwarding defaults:
// git configuration (never a key) for every working profile; gh tokens and
// ssh keys only when asked for explicitly — they are credentials, and the
// policies gate them. clean forwards nothing and applies no dotfiles.
var containerProfiles = map[string]ContainerProfile{
	"python": {ImagePurpose: "python", ForwardGit: true, Dotfiles: true,
		// --system-site-packages: the image's pytest stays importable in
		// the venv (there is no package index to install it from).
		SetupCommands: []string{`python3 -m venv --system-site-packages "$HOME/.venv"`},
		Env:           map[string]string{"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONUNBUFFERED": "1"}},
	"node": {ImagePurpose: "node", ForwardGit: true, Dotfiles: true,
		Env: map[string]string{"NPM_CONFIG_UPDATE_NOTIFIER": "false", "NPM_CONFIG_FUND": "false"}},
	"rust": {ImagePurpose: "rust", ForwardGit: true, Dotfiles: true,
		// Cargo must not try crates.io when the container has no network.
		Env: map[string]string{"CARGO_NET_OFFLINE": "true"}},
	"go": {ImagePurpose: "go", ForwardGit: true, Dotfiles: true,
		Env: map[string]string{"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "GOPROXY": "off"}},
	"general": {ImagePurpose: "general", ForwardGit: true, Dotfiles: true},
	"clean":   {ImagePurpose: "general"},
}

// ProfileNames lists the purposes a create accepts, try-repo included.
func ProfileNames() []string {
	out := append(slices.Collect(maps.Keys(containerProfiles)), PurposeTryRepo)
	slices.Sort(out)
	return out
}

// Profile returns the named profile; ErrInvalid listing the profiles when
// there is none of that name.
func Profile(name string) (ContainerProfile, error) {
	p, ok := containerProfiles[name]
	if !ok {
		return ContainerProfile{}, backend.Errorf(backend.ErrInvalid, "containers.create", name,
			"unknown purpose %q: use one of %s, or leave purpose empty", name, strings.Join(ProfileNames(), ", "))
	}
	p.Name = name
	p.SetupCommands = append([]string(nil), p.SetupCommands...)
	env := make(map[string]string, len(p.Env))
	for k, v := range p.Env {
		env[k] = v
	}
	p.Env = env
	return p, nil
}

// givenKeys reads which top-level keys a raw request has: a key given as
// false or "" is given all the same, and wins over the profile.
func givenKeys(raw []byte) map[string]bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// given says whether the request set a parameter. A request decoded from
// JSON knows (Given); one built in Go without Given counts a non-zero
// value as given, so a Go caller turning a profile's default off sets
// Given[name].
func (r ContainerRequest) given(name string, nonZero bool) bool {
	if r.Given != nil {
		return r.Given[name]
	}
	return nonZero
}

// applyProfile fills what req did not give from profile p and its image:
// explicit parameters always win; env merges, explicit keys winning.
func applyProfile(req ContainerRequest, p ContainerProfile, image string) ContainerRequest {
	if !req.given("image", req.Image != "") {
		req.Image = image
	}
	if !req.given("setup_commands", len(req.SetupCommands) > 0) {
		req.SetupCommands = append([]string(nil), p.SetupCommands...)
	}
	if !req.given("forward_git", req.ForwardGit) {
		req.ForwardGit = p.ForwardGit
	}
	if !req.given("forward_gh", req.ForwardGh) {
		req.ForwardGh = p.ForwardGh
	}
	if !req.given("forward_ssh", req.ForwardSSH) {
		req.ForwardSSH = p.ForwardSSH
	}
	env := make(map[string]string, len(p.Env)+len(req.Env))
	for k, v := range p.Env {
		env[k] = v
	}
	for k, v := range req.Env {
		env[k] = v
	}
	if len(env) > 0 {
		req.Env = env
	}
	req.ProfileDotfiles = p.Dotfiles
	return req
}
