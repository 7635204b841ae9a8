package host

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// dockerfileOffNote is the note of a Dockerfile repository that is not
// built; why says why.
const dockerfileOffNote = "try-repo: the repository has a Dockerfile; %s, so it runs the general image " +
	"(or build the image yourself, load it into Podman and pass image)"

// dockerfileBuilder is c's DockerfileBuilder when its configuration lets
// it build.
func dockerfileBuilder(c backend.Containers) (backend.DockerfileBuilder, bool) {
	b, ok := c.(backend.DockerfileBuilder)
	if !ok || !b.BuildsDockerfiles() {
		return nil, false
	}
	return b, true
}

// buildsDockerfile reports whether a create of req may build a
// repository's Dockerfile: a try-repo on a backend that builds them. The
// policies learn it before the clone, so before anyone knows whether the
// repository has one.
func buildsDockerfile(c backend.Containers, req ContainerRequest) bool {
	_, ok := dockerfileBuilder(c)
	return ok && req.RepoURL != ""
}

// tryDockerfile builds a try-repo repository's Dockerfile into the image
// its container runs, when the repository has one (and no marker of a
// purpose) and the backend builds them. It returns the image, or "" with
// the note saying why the general image runs instead: a build that fails
// leaves no image behind. Only a cancelled ctx is an error.
func (s *Session) tryDockerfile(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, repo *clonedRepo, url string) (image, note string, err error) {
	if repo.marker != "Dockerfile" {
		return "", "", nil
	}
	b, ok := c.(backend.DockerfileBuilder)
	switch {
	case !ok:
		return "", fmt.Sprintf(dockerfileOffNote, "this backend does not build Dockerfiles"), nil
	case !b.BuildsDockerfiles():
		return "", fmt.Sprintf(dockerfileOffNote, "wai does not build Dockerfiles unless the backend's build_dockerfiles is true ([backends.podman.containers])"), nil
	case repo.root == "":
		return "", fmt.Sprintf(dockerfileOffNote, "wai builds the Dockerfile of a cloned URL only, not of a workspace path (give repo_url as a file:// URL)"), nil
	}
	report, finish := progressSteps(ctx)
	img, err := b.BuildDockerfile(ctx, owner, backend.DockerfileBuild{ContextDir: repo.root, Key: url + "\x00" + repo.commit, Progress: report})
	finish()
	if ctx.Err() != nil {
		return "", "", ctx.Err()
	}
	if err != nil {
		return "", "try-repo: building the repository's Dockerfile failed, so it runs the general image: " + err.Error(), nil
	}
	return img.Name, "try-repo: built the repository's Dockerfile into " + img.Name, nil
}

// headCommit is the commit a clone checked out, "" when git cannot say.
func headCommit(ctx context.Context, dir string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
