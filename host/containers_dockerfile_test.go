package host

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// dockerfileContainers is a fake backend that builds Dockerfiles: on is
// its build_dockerfiles, fail makes every build fail.
type dockerfileContainers struct {
	*fakeContainers
	on, fail bool
	builds   []backend.DockerfileBuild
	sawFile  bool // the context directory held the Dockerfile
}

// Interface guards
var _ backend.DockerfileBuilder = (*dockerfileContainers)(nil)

func (d *dockerfileContainers) BuildsDockerfiles() bool { return d.on }

func (d *dockerfileContainers) BuildDockerfile(_ context.Context, _ backend.ContainerOwner, b backend.DockerfileBuild) (backend.DockerfileImage, error) {
	d.builds = append(d.builds, b)
	_, err := os.Stat(filepath.Join(b.ContextDir, "Dockerfile"))
	d.sawFile = err == nil
	if d.fail {
		return backend.DockerfileImage{}, backend.Errorf(backend.ErrUnavailable, "containers.create", b.ContextDir, "building the Dockerfile: RUN false: exit 1")
	}
	return backend.DockerfileImage{Name: "localhost/wai-tryrepo-test:latest"}, nil
}

func dockerfileKernel(t *testing.T, policy map[string]any, on, fail bool) (*Session, *dockerfileContainers) {
	t.Helper()
	registerImages.Do(func() {
		backend.RegisterDriver("zz-images", imagesDriver{mu: &imageBuilds.mu, builds: &imageBuilds.list})
	})
	cfg := testConfig(t)
	cfg.Backend = "zz-images"
	dc := &dockerfileContainers{fakeContainers: newFakeContainers(), on: on, fail: fail}
	k := safetyKernel(t, cfg, policy, dc)
	return session(t, k, "df"), dc
}

func tryRepo(t *testing.T, s *Session, src string) (ContainerResponse, error) {
	t.Helper()
	req, _ := DecodeContainerRequest([]byte(`{"operation":"create","name":"d","purpose":"try-repo","mount_cwd":false,"repo_url":"file://` + src + `"}`))
	return s.Containers(context.Background(), req)
}

func hasNote(resp ContainerResponse, part string) bool {
	return strings.Contains(strings.Join(resp.Notes, "\n"), part)
}

// A Dockerfile repository is built only on a backend whose
// build_dockerfiles is on, with container_safety's approval; otherwise,
// or when the build fails, the general image runs with a note saying why.
func TestTryRepoDockerfileKernel(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("try-repo needs git: apt-get install git")
	}
	t.Setenv("HOME", t.TempDir())
	src := gitRepo(t, "Dockerfile")
	allow := map[string]any{"allow_dockerfile_build": true}

	// A backend that cannot build, and one with the key off: the general
	// image, the note naming why, no gate.
	k, fc := profilesKernel(t)
	resp, err := tryRepo(t, session(t, k, "df0"), src)
	if err != nil || fc.created[0].Image != "localhost/wai-general:h" || !hasNote(resp, "this backend does not build Dockerfiles") {
		t.Errorf("backend without builds: %v, %+v", err, resp.Notes)
	}
	s, dc := dockerfileKernel(t, nil, false, false)
	resp, err = tryRepo(t, s, src)
	if err != nil || len(dc.builds) != 0 || dc.created[0].Image != "localhost/wai-general:h" || !hasNote(resp, "build_dockerfiles") {
		t.Errorf("build_dockerfiles off: %v, builds %d, %+v", err, len(dc.builds), resp.Notes)
	}

	// On: container_safety asks (no one to ask here: denied), before
	// anything is cloned or built.
	s, dc = dockerfileKernel(t, nil, true, false)
	if _, err := tryRepo(t, s, src); !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "allow_dockerfile_build") {
		t.Errorf("ungated Dockerfile build: %v", err)
	}
	if len(dc.builds) != 0 || len(dc.created) != 0 {
		t.Errorf("a denied create built %d, created %d", len(dc.builds), len(dc.created))
	}

	// Allowed: the clone is the context, the key names URL and commit,
	// the container runs the built image.
	s, dc = dockerfileKernel(t, allow, true, false)
	resp, err = tryRepo(t, s, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(dc.builds) != 1 || !dc.sawFile || !regexp.MustCompile(`^file://.+\x00[0-9a-f]{40}$`).MatchString(dc.builds[0].Key) {
		t.Errorf("builds %+v (Dockerfile in context: %v)", dc.builds, dc.sawFile)
	}
	if dc.created[0].Image != "localhost/wai-tryrepo-test:latest" || resp.Profile == nil || resp.Profile.Image != dc.created[0].Image ||
		!resp.Profile.ImageBuilt || resp.Profile.Marker != "Dockerfile" || !hasNote(resp, "built the repository's Dockerfile") {
		t.Errorf("built: spec image %q, profile %+v, notes %q", dc.created[0].Image, resp.Profile, resp.Notes)
	}

	// A failed build: the general image, the build's error in the note.
	s, dc = dockerfileKernel(t, allow, true, true)
	resp, err = tryRepo(t, s, src)
	if err != nil || len(dc.created) != 1 || dc.created[0].Image != "localhost/wai-general:h" || !hasNote(resp, "RUN false: exit 1") {
		t.Errorf("failed build: %v, %+v", err, resp.Notes)
	}

	// A repository with a purpose's marker is not built.
	s, dc = dockerfileKernel(t, allow, true, false)
	if _, err := tryRepo(t, s, gitRepo(t, "Dockerfile", "go.mod")); err != nil || len(dc.builds) != 0 {
		t.Errorf("go repository with a Dockerfile: %v, %d builds", err, len(dc.builds))
	}
}
