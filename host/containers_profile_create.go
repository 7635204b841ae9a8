package host

import (
	"context"
	"fmt"
	"path"
	"sync"

	"github.com/wai-dev/wai/host/backend"
)

// ProfileResult is what a create's purpose resolved to.
type ProfileResult struct {
	Purpose string `json:"purpose"`
	// Detected: try-repo chose Purpose from the repository's files
	// (Marker names the file that decided).
	Detected bool   `json:"detected,omitempty"`
	Marker   string `json:"marker,omitempty"`
	// Image is the purpose image the container runs ("" when the request
	// named its own image); ImageBuilt says it was built for this create.
	Image      string `json:"image,omitempty"`
	ImageBuilt bool   `json:"image_built,omitempty"`
	Dotfiles   bool   `json:"dotfiles"`
	// Repo is where try-repo put the repository in the container.
	Repo string `json:"repo,omitempty"`

	imagePurpose string // the recipe of Image
}

// resolveCreate applies the profile of req's purpose (detected, for
// try-repo, when not "") to req. try-repo before detection resolves with
// the general profile's defaults, which every profile it can detect
// shares for forwarding (a test holds them to it), so the policies see
// what the create will do.
func (s *Session) resolveCreate(ctx context.Context, req ContainerRequest, detected string) (ContainerRequest, *ProfileResult, error) {
	purpose := req.Purpose
	if req.RepoURL != "" && purpose != PurposeTryRepo {
		return req, nil, backend.Errorf(backend.ErrInvalid, "containers.create", req.RepoURL, "repo_url goes with purpose = %q", PurposeTryRepo)
	}
	if purpose == "" {
		req.ProfileDotfiles = true
		return req, nil, nil
	}
	if purpose == PurposeTryRepo {
		if req.RepoURL == "" {
			return req, nil, backend.Errorf(backend.ErrInvalid, "containers.create", "", "purpose try-repo needs repo_url: a git URL or a path in the session workspace")
		}
		if _, err := repoSource(req.RepoURL); err != nil {
			return req, nil, err
		}
		purpose = firstNonEmpty(detected, "general")
	}
	p, err := Profile(purpose)
	if err != nil {
		return req, nil, err
	}
	res := &ProfileResult{Purpose: purpose, Detected: detected != "", Dotfiles: p.Dotfiles, imagePurpose: p.ImagePurpose}
	image := ""
	if !req.given("image", req.Image != "") {
		ref, err := s.purposeImage(ctx, p.ImagePurpose)
		if err != nil {
			return req, nil, err
		}
		image, res.Image = ref.Name, ref.Name
	}
	return applyProfile(req, p, image), res, nil
}

// purposeImage is the image of the current recipe of purpose on the
// configured backend (Exists false when it is not built yet).
func (s *Session) purposeImage(ctx context.Context, purpose string) (backend.ImageRef, error) {
	refs, err := s.k.Images(ctx)
	if err != nil {
		return backend.ImageRef{}, err
	}
	for _, r := range refs {
		if r.Purpose == purpose && (r.Current || !r.Exists) {
			return r, nil
		}
	}
	return backend.ImageRef{}, backend.Errorf(backend.ErrUnavailable, "containers.create", purpose,
		"the backend has no image recipe for purpose %q (`wai image ls` lists them)", purpose)
}

// createWithProfile is create with its purpose applied: try-repo clones
// and detects first; a missing purpose image is built when the backend
// allows on-demand builds; then the container is created and set up.
func (s *Session) createWithProfile(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, req ContainerRequest) (ContainerResponse, error) {
	var resp ContainerResponse
	var repo *clonedRepo
	detected := ""
	if req.Purpose == PurposeTryRepo {
		var err error
		if repo, err = s.cloneRepo(ctx, req.RepoURL); err != nil {
			return resp, err
		}
		defer repo.remove()
		detected = repo.purpose
	}
	rreq, prof, err := s.resolveCreate(ctx, req, detected)
	if err != nil {
		return resp, err
	}
	if prof == nil {
		return s.createContainer(ctx, c, owner, rreq)
	}
	rreq.Purpose = prof.Purpose
	if repo != nil && prof.Image != "" {
		image, note, err := s.tryDockerfile(ctx, c, owner, repo, req.RepoURL)
		if err != nil {
			return resp, err
		}
		repo.notes = appendNote(repo.notes, note)
		if image != "" {
			prof.Image, prof.ImageBuilt, rreq.Image = image, true, image
		}
	}
	if prof.Image != "" && !prof.ImageBuilt {
		report, finish := progressSteps(ctx)
		checking := backend.StartProgress(ctx, "looking for the "+prof.imagePurpose+" image (built once if missing)")
		ref, err := s.k.BuildImage(ctx, prof.imagePurpose, backend.ImageBuild{OnDemand: true, Progress: report})
		checking()
		finish()
		if err != nil {
			return resp, err
		}
		prof.Image, prof.ImageBuilt = ref.Name, ref.Built
		rreq.Image = ref.Name
	}
	if repo == nil {
		resp, err = s.createContainer(ctx, c, owner, rreq)
		resp.Profile = prof
		return resp, err
	}
	prof.Marker = repo.marker
	return s.createTryRepo(ctx, c, owner, rreq, prof, repo)
}

// createTryRepo creates the container with the repository's tarball
// provisioned, unpacks it (git is in every purpose image, so the
// repository works as one in there), then runs the setup in it.
func (s *Session) createTryRepo(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, req ContainerRequest, prof *ProfileResult, repo *clonedRepo) (ContainerResponse, error) {
	var resp ContainerResponse
	mountCwd := !(req.Persistent && !s.spec.Keep)
	if req.MountCwd != nil {
		mountCwd = *req.MountCwd
	}
	dest := repoDest(req.Workdir, mountCwd, repo.name)
	var steps []string
	if repo.workspace != "" {
		if !mountCwd {
			return resp, backend.Errorf(backend.ErrInvalid, "containers.create", repo.workspace,
				"repo_url is a workspace path, which the container sees only with mount_cwd = true")
		}
		dest = path.Join("/workspace", repo.workspace)
	} else {
		req.files = append(req.files, backend.ContainerFile{Path: repoTarball, Data: repo.tarball, Mode: 0o600})
		steps = append(steps, fmt.Sprintf(`mkdir -p %s && tar -xf "$HOME/%s" -C %s && rm -f "$HOME/%s"`,
			shellQuote(dest), repoTarball, shellQuote(dest), repoTarball))
	}
	unpackSteps := len(steps)
	// The setup commands run in the repository; wai's own unpack step is
	// no command of the agent's.
	if err := s.checkInContainer(ctx, createWhere(req), createCommands(req, dest)); err != nil {
		return resp, err
	}
	steps = append(steps, req.SetupCommands...)
	req.SetupCommands = nil
	resp, err := s.createContainer(ctx, c, owner, req)
	resp.Profile = prof
	resp.Notes = append(resp.Notes, repo.notes...)
	if err != nil {
		return resp, err
	}
	prof.Repo = dest
	ref := backend.ContainerRef{Owner: owner, Name: resp.Container.Name}
	for i, cmd := range steps {
		dir := dest
		if i < unpackSteps {
			dir = ""
		}
		res, err := s.containerExec(ctx, c, ref, cmd, dir, req.Timeout)
		resp.Setup = append(resp.Setup, toContainerExec(res))
		if err != nil || res.ExitCode != 0 {
			resp.Notes = append(resp.Notes, fmt.Sprintf("setup command %q failed (exit %d%s); the container is kept: fix it with exec, or destroy it", cmd, res.ExitCode, errSuffix(err)))
			break
		}
	}
	resp.Notes = append(resp.Notes, fmt.Sprintf("try-repo: %s is a %s project (%s); it is at %s in the container: exec with workdir %q",
		req.RepoURL, prof.Purpose, firstNonEmpty(prof.Marker, "no marker file"), dest, dest))
	return resp, nil
}

// progressSteps forwards an image build's steps to the context's progress
// reporter (MCP progress, the CLI's status line) as one stage at a time;
// finish ends the last one.
func progressSteps(ctx context.Context) (report func(backend.ImageProgress), finish func()) {
	var mu sync.Mutex
	prev := ""
	end := func() {
		if prev != "" {
			backend.ReportProgress(ctx, backend.Progress{Stage: prev, Done: true})
			prev = ""
		}
	}
	report = func(ev backend.ImageProgress) {
		mu.Lock()
		defer mu.Unlock()
		end()
		if ev.Phase != "done" && ev.Phase != "cached" {
			prev = "image " + ev.Phase + ": " + ev.Message
			backend.ReportProgress(ctx, backend.Progress{Stage: prev})
		}
	}
	return report, func() {
		mu.Lock()
		defer mu.Unlock()
		end()
	}
}
