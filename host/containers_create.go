package host

import (
	"context"
	"fmt"
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

// createContainer runs preflight on a session's first create, resolves
// what comes from the host (environment, forwarded credentials), creates
// the container and runs its setup commands. Every create (a restore, a
// compose service) comes here: the commands it will run in the container
// are put to the policies first, so a refused one makes nothing.
func (s *Session) createContainer(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, req ContainerRequest) (ContainerResponse, error) {
	var resp ContainerResponse
	if err := s.checkInContainer(ctx, createWhere(req), createCommands(req, req.Workdir)); err != nil {
		return resp, err
	}
	// Each step is a progress stage: a first create can take half a
	// minute, and "running for 30s" alone says nothing of why.
	if !s.containersReady.Load() {
		done := backend.StartProgress(ctx, "checking the container backend (preflight, once a session)")
		pf, err := c.ContainersPreflight(ctx)
		done()
		if err != nil {
			return resp, err
		}
		if !pf.Ready {
			resp.Preflight = &pf
			return resp, backend.Errorf(backend.ErrUnavailable, "containers.create", "", "containers are not ready here: %s", failedChecks(pf))
		}
		s.containersReady.Store(true)
	}
	pass, err := parsePassthrough(req.EnvPassthrough)
	if err != nil {
		return resp, err
	}
	// A persistent container outlives the session, and the workspace goes
	// with the session (unless kept): it mounts it only when that holds.
	lasting := req.Persistent && !s.spec.Keep
	mountCwd := !lasting
	if req.MountCwd != nil {
		mountCwd = *req.MountCwd
	}
	if mountCwd && lasting {
		return resp, backend.Errorf(backend.ErrInvalid, "containers.create", req.Name,
			"a persistent container cannot mount the workspace of a session that ends before it: set mount_cwd = false (copy files in instead)")
	}
	if mountCwd {
		if _, _, err := s.workspace(ctx); err != nil {
			return resp, err
		}
	} else if req.MountCwd == nil {
		// Told, not silent: the tool's instructions say /workspace is
		// mounted, and a model would look for its files there.
		resp.Notes = append(resp.Notes, "no /workspace in it: a persistent container outlives this session's workspace, so it is not mounted; "+
			"move files with copy_in and copy_out")
	}
	spec := backend.ContainerSpec{Owner: owner, Name: req.Name, Image: req.Image, Purpose: req.Purpose, Workdir: req.Workdir,
		Mounts: req.Mounts, MountWorkspace: mountCwd, Ports: req.Ports, Env: map[string]string{}, EnvPassthrough: pass,
		HostEnv: s.k.containerHostEnv(), Memory: req.MemoryLimit, Network: req.Network, Persistent: req.Persistent,
		Privileged: req.Privileged, GPU: req.GPU, Command: req.ServiceCommand, Project: req.Project, Service: req.Service,
		Provisioning: map[string]bool{"forward_git": req.ForwardGit, "forward_gh": req.ForwardGh, "forward_ssh": req.ForwardSSH}}
	for k, v := range req.Env {
		spec.Env[k] = v
	}
	dotfiles, err := s.dotfilesPlanFor(req, mountCwd)
	if err != nil {
		return resp, err
	}
	spec.Files = append(spec.Files, req.files...)
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
	if dotfiles != nil {
		// After the forwarded files: an inline .gitconfig wins.
		spec.Files = append(spec.Files, dotfiles.inline...)
		spec.Provisioning["dotfiles"] = dotfiles.skipped == ""
	}
	done := backend.StartProgress(ctx, "creating and starting container "+firstNonEmpty(req.Name, "for purpose "+req.Purpose)+
		" from image "+firstNonEmpty(req.Image, "(the default)"))
	info, err := c.CreateContainer(ctx, spec)
	done()
	if err != nil {
		return resp, err
	}
	s.containersUsed.Store(true)
	resp.Container = &info
	s.setUpCreated(ctx, c, backend.ContainerRef{Owner: owner, Name: info.Name}, req, dotfiles, &resp)
	return resp, nil
}

// setUpCreated applies the dotfiles and runs the setup commands in a
// container just made; a failure is a note: the container is kept.
func (s *Session) setUpCreated(ctx context.Context, c backend.Containers, ref backend.ContainerRef, req ContainerRequest, dotfiles *dotfilesPlan, resp *ContainerResponse) {
	var note string
	done := func() {}
	if dotfiles != nil {
		done = backend.StartProgress(ctx, "applying your dotfiles in "+ref.Name)
	}
	resp.Dotfiles, note = s.provisionDotfiles(ctx, c, ref, dotfiles)
	done()
	resp.Notes = appendNote(resp.Notes, note)
	for i, cmd := range req.SetupCommands {
		done := backend.StartProgress(ctx, fmt.Sprintf("setup command %d/%d in %s: %s", i+1, len(req.SetupCommands), ref.Name, cmd))
		res, err := s.containerExec(ctx, c, ref, cmd, "", req.Timeout)
		done()
		resp.Setup = append(resp.Setup, toContainerExec(res))
		if err != nil || res.ExitCode != 0 {
			resp.Notes = append(resp.Notes, fmt.Sprintf("setup command %q failed (exit %d%s); the container is kept: fix it with exec, or destroy it", cmd, res.ExitCode, errSuffix(err)))
			break
		}
	}
}

// containerHostEnv is the process environment a create may pass from,
// without wai's own secrets (Config.SecretEnv): no env_passthrough mode,
// an explicit list included, can hand a container the bearer token that
// opens wai itself.
func (k *Kernel) containerHostEnv() map[string]string {
	env := hostEnviron()
	for _, name := range k.cfg.SecretEnv {
		delete(env, name)
	}
	return env
}

// failedChecks names each failed check with its detail and guidance: the
// error is all the CLI prints, and "1 check failed" alone tells nobody
// what to fix.
func failedChecks(pf backend.ContainerPreflight) string {
	var parts []string
	for _, c := range pf.Checks {
		if !c.Passed && !c.Optional {
			parts = append(parts, fmt.Sprintf("%s failed (%s): %s", c.Name, c.Detail, c.Guidance))
		}
	}
	if len(parts) == 0 {
		return pf.Summary
	}
	return strings.Join(parts, "; ")
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

func appendNote(notes []string, n string) []string {
	if n == "" {
		return notes
	}
	return append(notes, n)
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
