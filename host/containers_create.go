package host

import (
	"context"
	"fmt"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

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
	if err := s.preflightOnce(ctx, c, &resp); err != nil {
		return resp, err
	}
	pass, err := parsePassthrough(req.EnvPassthrough)
	if err != nil {
		return resp, err
	}
	mountCwd, err := s.mountsWorkspace(ctx, req, &resp)
	if err != nil {
		return resp, err
	}
	spec := s.containerSpec(owner, req, pass, mountCwd)
	dotfiles, err := s.dotfilesPlanFor(req, mountCwd)
	if err != nil {
		return resp, err
	}
	spec.Files = append(spec.Files, req.files...)
	forwardFromHost(ctx, req, &spec, &resp)
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

// preflightOnce checks the container backend on the session's first
// create; a backend not ready answers its checks in resp.Preflight.
func (s *Session) preflightOnce(ctx context.Context, c backend.Containers, resp *ContainerResponse) error {
	if s.containersReady.Load() {
		return nil
	}
	done := backend.StartProgress(ctx, "checking the container backend (preflight, once a session)")
	pf, err := c.ContainersPreflight(ctx)
	done()
	if err != nil {
		return err
	}
	if !pf.Ready {
		resp.Preflight = &pf
		return backend.Errorf(backend.ErrUnavailable, "containers.create", "", "containers are not ready here: %s", failedChecks(pf))
	}
	s.containersReady.Store(true)
	return nil
}

// mountsWorkspace decides whether the container mounts the session
// workspace, opening it if so. A persistent container outlives the
// session, and the workspace goes with the session (unless kept): it
// mounts it only when that holds.
func (s *Session) mountsWorkspace(ctx context.Context, req ContainerRequest, resp *ContainerResponse) (bool, error) {
	lasting := req.Persistent && !s.spec.Keep
	mountCwd := !lasting
	if req.MountCwd != nil {
		mountCwd = *req.MountCwd
	}
	if mountCwd && lasting {
		return false, backend.Errorf(backend.ErrInvalid, "containers.create", req.Name,
			"a persistent container cannot mount the workspace of a session that ends before it: set mount_cwd = false (copy files in instead)")
	}
	if mountCwd {
		if _, _, err := s.workspace(ctx); err != nil {
			return false, err
		}
	} else if req.MountCwd == nil {
		// Told, not silent: the tool's instructions say /workspace is
		// mounted, and a model would look for its files there.
		resp.Notes = append(resp.Notes, "no /workspace in it: a persistent container outlives this session's workspace, so it is not mounted; "+
			"move files with copy_in and copy_out")
	}
	return mountCwd, nil
}

// containerSpec is what the backend is asked to make of req, before the
// files forwarded from the host.
func (s *Session) containerSpec(owner backend.ContainerOwner, req ContainerRequest, pass backend.EnvPassthrough, mountCwd bool) backend.ContainerSpec {
	spec := backend.ContainerSpec{Owner: owner, Name: req.Name, Image: req.Image, Purpose: req.Purpose, Workdir: req.Workdir,
		Mounts: req.Mounts, MountWorkspace: mountCwd, Ports: req.Ports, Env: map[string]string{}, EnvPassthrough: pass,
		HostEnv: s.k.containerHostEnv(), Memory: req.MemoryLimit, Network: req.Network, Persistent: req.Persistent,
		Privileged: req.Privileged, GPU: req.GPU, Command: req.ServiceCommand, Project: req.Project, Service: req.Service,
		Provisioning: map[string]bool{"forward_git": req.ForwardGit, "forward_gh": req.ForwardGh, "forward_ssh": req.ForwardSSH}}
	for k, v := range req.Env {
		spec.Env[k] = v
	}
	return spec
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
