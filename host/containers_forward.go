package host

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// maxForwardedFile bounds one forwarded configuration file: git and ssh
// configuration is small, and anything bigger is not what was meant.
const maxForwardedFile = 256 << 10

// forwardFromHost adds what forward_git, forward_gh and forward_ssh take
// from the host to spec; what it could not find is a note in resp.
func forwardFromHost(ctx context.Context, req ContainerRequest, spec *backend.ContainerSpec, resp *ContainerResponse) {
	home, _ := os.UserHomeDir()
	if req.ForwardGit {
		files, note := gitFiles(home)
		spec.Files = append(spec.Files, files...)
		resp.Notes = appendNote(resp.Notes, note)
	}
	if req.ForwardGh {
		token, note := ghToken(ctx)
		if token != "" {
			for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN"} {
				if _, set := spec.Env[k]; !set {
					spec.Env[k] = token
				}
			}
		}
		resp.Notes = appendNote(resp.Notes, note)
	}
	if req.ForwardSSH {
		files, note := sshFiles(home)
		spec.Files = append(spec.Files, files...)
		resp.Notes = appendNote(resp.Notes, note)
	}
}

// gitFiles reads the git configuration a container needs for commits and
// git over ssh: ~/.gitconfig, ~/.gitconfig.local, ~/.config/git/config and
// ~/.ssh/known_hosts — never a key.
func gitFiles(home string) ([]backend.ContainerFile, string) {
	var out []backend.ContainerFile
	for _, rel := range []string{".gitconfig", ".gitconfig.local", ".config/git/config", ".ssh/known_hosts"} {
		if f, ok := readForwarded(home, rel, 0o644); ok {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, "forward_git: no git configuration found in " + home + " (~/.gitconfig, ~/.config/git/config); nothing was forwarded"
	}
	return out, ""
}

// sshFiles reads ~/.ssh for forward_ssh: its regular files, private keys
// included (the policy gates this), given mode 0600 in the container as
// ssh insists.
func sshFiles(home string) ([]backend.ContainerFile, string) {
	dir := filepath.Join(home, ".ssh")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, "forward_ssh: no ~/.ssh directory; nothing was forwarded"
	}
	var out []backend.ContainerFile
	for _, e := range ents {
		if f, ok := readForwarded(home, filepath.Join(".ssh", e.Name()), 0o600); ok {
			out = append(out, f)
		}
	}
	return out, ""
}

// readForwarded reads a small regular file under home, never through a
// symlink at the last element.
func readForwarded(home, rel string, mode fs.FileMode) (backend.ContainerFile, bool) {
	if home == "" {
		return backend.ContainerFile{}, false
	}
	p := filepath.Join(home, rel)
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxForwardedFile {
		return backend.ContainerFile{}, false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return backend.ContainerFile{}, false
	}
	return backend.ContainerFile{Path: filepath.ToSlash(rel), Data: data, Mode: mode}, true
}

// ghToken asks a logged-in gh for its token; without gh, or logged out,
// it says how to fix that instead.
func ghToken(ctx context.Context) (string, string) {
	gh, err := exec.LookPath("gh")
	if err != nil {
		return "", "forward_gh: gh is not installed on the host; skipped (install gh and run `gh auth login`, or pass GH_TOKEN in env)"
	}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(tctx, gh, "auth", "token").Output()
	token := strings.TrimSpace(string(out))
	if err != nil || token == "" {
		return "", "forward_gh: gh is not logged in; skipped (run `gh auth login` on the host)"
	}
	return token, ""
}
