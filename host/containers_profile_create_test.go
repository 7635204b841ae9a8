package host

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

// imagesDriver is a driver whose images the profile tests choose: node
// exists, the others are missing; python is never built on demand, the
// others are.
type imagesDriver struct {
	mu     *sync.Mutex
	builds *[]backend.ImageBuild
}

// Interface guards
var _ backend.ImageBuilder = imagesDriver{}

func (imagesDriver) Open(context.Context, backend.Options) (backend.Backend, error) {
	return nil, backend.Errorf(backend.ErrUnavailable, "open", "", "the test passes its backend")
}

func (imagesDriver) Purposes() []string { return []string{"general", "go", "node", "python", "rust"} }

func (d imagesDriver) Images(context.Context, backend.Options) ([]backend.ImageRef, error) {
	var out []backend.ImageRef
	for _, p := range d.Purposes() {
		out = append(out, backend.ImageRef{Purpose: p, Name: "localhost/wai-" + p + ":h", Recipe: "h", Exists: p == "node", Current: p == "node"})
	}
	return out, nil
}

func (d imagesDriver) BuildImage(_ context.Context, _ backend.Options, purpose string, b backend.ImageBuild) (backend.ImageRef, error) {
	d.mu.Lock()
	*d.builds = append(*d.builds, b)
	d.mu.Unlock()
	ref := backend.ImageRef{Purpose: purpose, Name: "localhost/wai-" + purpose + ":h", Exists: true, Current: true}
	if purpose != "python" {
		b.Progress(backend.ImageProgress{Phase: "cached", Message: "up to date"})
		return ref, nil
	}
	b.Progress(backend.ImageProgress{Phase: "bootstrap", Message: "downloading"})
	return backend.ImageRef{}, backend.Errorf(backend.ErrUnavailable, "image", ref.Name, "not built: run `wai image build %s`", purpose)
}

var registerImages sync.Once
var imageBuilds struct {
	mu   sync.Mutex
	list []backend.ImageBuild
}

func profilesKernel(t *testing.T) (*Kernel, *fakeContainers) {
	t.Helper()
	registerImages.Do(func() {
		backend.RegisterDriver("zz-images", imagesDriver{mu: &imageBuilds.mu, builds: &imageBuilds.list})
	})
	cfg := testConfig(t)
	cfg.Backend = "zz-images"
	fc := newFakeContainers()
	return safetyKernel(t, cfg, nil, fc), fc
}

// A create's purpose reaches the backend as its profile: the purpose
// image, the env, the setup; a missing image is asked for on demand and
// its refusal is the create's failure; an explicit image skips all that.
func TestCreateWithProfileKernel(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	k, fc := profilesKernel(t)
	s := session(t, k, "p1")
	var progress backendtest.Progress
	ctx := progress.Context(context.Background())
	req, _ := DecodeContainerRequest([]byte(`{"operation":"create","name":"n1","purpose":"node","mount_cwd":false}`))
	resp, err := s.Containers(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	got := fc.created[0]
	if got.Image != "localhost/wai-node:h" || got.Purpose != "node" || got.Env["NPM_CONFIG_FUND"] != "false" ||
		resp.Profile == nil || resp.Profile.Purpose != "node" || !resp.Profile.Dotfiles {
		t.Errorf("node create: spec %+v, profile %+v", got, resp.Profile)
	}
	imageBuilds.mu.Lock()
	if n := len(imageBuilds.list); n == 0 || !imageBuilds.list[n-1].OnDemand {
		t.Errorf("the image was not asked for on demand: %+v", imageBuilds.list)
	}
	imageBuilds.mu.Unlock()

	req, _ = DecodeContainerRequest([]byte(`{"operation":"create","name":"n2","purpose":"python","mount_cwd":false}`))
	if _, err := s.Containers(ctx, req); !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "wai image build python") {
		t.Errorf("missing python image: %v, want the command that builds it", err)
	}
	if len(fc.created) != 1 {
		t.Errorf("a container was created without its image: %+v", fc.created)
	}
	// The build's own steps reach the reporter, beside the create's.
	if stages := progress.Stages(); !slices.Contains(stages, "image bootstrap: downloading") {
		t.Errorf("progress stages %q: want the image build's", stages)
	}

	req, _ = DecodeContainerRequest([]byte(`{"operation":"create","name":"n3","purpose":"python","image":"my/img","mount_cwd":false,"forward_git":false}`))
	resp, err = s.Containers(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := fc.created[1]; got.Image != "my/img" || got.Provisioning["forward_git"] || len(resp.Setup) != 1 ||
		!strings.Contains(resp.Setup[0].Stdout, "venv") || resp.Profile.Image != "" {
		t.Errorf("explicit image: spec %+v, resp %+v", got, resp)
	}
	req, _ = DecodeContainerRequest([]byte(`{"operation":"create","name":"n4","purpose":"perl"}`))
	if _, err := s.Containers(ctx, req); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "try-repo") {
		t.Errorf("unknown purpose: %v", err)
	}
	req, _ = DecodeContainerRequest([]byte(`{"operation":"create","name":"n5","repo_url":"https://example.com/x"}`))
	if _, err := s.Containers(ctx, req); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("repo_url without try-repo: %v", err)
	}
}

// try-repo through the kernel: the clone is provisioned as a tarball,
// unpacked by the first setup step, and the profile's setup runs in it.
func TestTryRepoKernel(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	t.Setenv("HOME", t.TempDir()) // nothing to forward
	k, fc := profilesKernel(t)
	s := session(t, k, "p2")
	src := gitRepo(t, "Cargo.toml")
	req, _ := DecodeContainerRequest([]byte(`{"operation":"create","name":"r1","purpose":"try-repo","mount_cwd":false,"repo_url":"file://` + src + `"}`))
	resp, err := s.Containers(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := fc.created[0]
	if got.Image != "localhost/wai-rust:h" || got.Purpose != "rust" || got.Env["CARGO_NET_OFFLINE"] != "true" {
		t.Errorf("spec %+v", got)
	}
	if len(got.Files) != 1 || got.Files[0].Path != repoTarball || !strings.Contains(string(got.Files[0].Data), "Cargo.toml") {
		t.Errorf("the clone's tarball was not provisioned: %d files", len(got.Files))
	}
	p := resp.Profile
	if p == nil || !p.Detected || p.Marker != "Cargo.toml" || !strings.HasSuffix(p.Repo, "/"+strings.TrimPrefix(src[strings.LastIndex(src, "/"):], "/")) {
		t.Errorf("profile %+v", p)
	}
	if len(resp.Setup) != 1 || !strings.Contains(resp.Setup[0].Stdout, "tar -xf") {
		t.Errorf("setup %+v", resp.Setup)
	}
}

// try-repo on a directory of the session workspace: detected where it is,
// used at /workspace/PATH, nothing cloned; without the workspace mounted
// the container could not see it, so that is refused.
func TestTryRepoWorkspacePath(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	k, fc := profilesKernel(t)
	s := session(t, k, "p3")
	ctx := context.Background()
	ws, _, err := s.workspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.FS().Write(ctx, backend.WriteRequest{Path: "src/proj/go.mod", Content: "module example.com/proj\n"}); err != nil {
		t.Fatal(err)
	}
	req, _ := DecodeContainerRequest([]byte(`{"operation":"create","name":"w1","purpose":"try-repo","repo_url":"src/proj"}`))
	resp, err := s.Containers(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.Profile; p == nil || p.Purpose != "go" || p.Marker != "go.mod" || p.Repo != "/workspace/src/proj" {
		t.Errorf("profile %+v", resp.Profile)
	}
	if got := fc.created[0]; len(got.Files) != 0 || got.Image != "localhost/wai-go:h" || !got.MountWorkspace {
		t.Errorf("spec: image %s, %d files, workspace %v", got.Image, len(got.Files), got.MountWorkspace)
	}
	req, _ = DecodeContainerRequest([]byte(`{"operation":"create","name":"w2","purpose":"try-repo","repo_url":"src/proj","mount_cwd":false}`))
	if _, err := s.Containers(ctx, req); !errors.Is(err, backend.ErrInvalid) || len(fc.created) != 1 {
		t.Errorf("workspace path without the workspace: %v", err)
	}
	req, _ = DecodeContainerRequest([]byte(`{"operation":"create","name":"w3","purpose":"try-repo","repo_url":"nope"}`))
	if _, err := s.Containers(ctx, req); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("missing workspace path: %v", err)
	}
}

// A file:// repository is a host path read for the agent: the policies
// see it among the mount paths, and container_safety refuses a sensitive
// one before anything is cloned.
func TestTryRepoLocalPathIsGated(t *testing.T) {
	k, fc := profilesKernel(t)
	s := session(t, k, "p4")
	req, _ := DecodeContainerRequest([]byte(`{"operation":"create","name":"g1","purpose":"try-repo","repo_url":"file:///root/private.git"}`))
	if _, err := s.Containers(context.Background(), req); !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "allow_sensitive_mounts") {
		t.Errorf("file:///root: %v, want container_safety's denial", err)
	}
	if len(fc.created) != 0 {
		t.Errorf("created %+v", fc.created)
	}
}

// The profile decides whether the configured dotfiles apply: every
// profile but clean takes them, no purpose takes them, clean leaves them
// out; an explicit dotfiles parameter applies whatever the profile says.
func TestProfileDecidesConfiguredDotfiles(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	k, _ := profilesKernel(t)
	k.cfg.Dotfiles = DotfilesConfig{Repo: "https://example.com/me/dotfiles"}
	s := session(t, k, "pd")
	ctx := context.Background()
	for _, c := range []struct {
		req  string
		want string
	}{
		{`{"operation":"create"}`, "https://example.com/me/dotfiles"},
		{`{"operation":"create","purpose":"node"}`, "https://example.com/me/dotfiles"},
		{`{"operation":"create","purpose":"clean"}`, ""},
		{`{"operation":"create","purpose":"clean","dotfiles":{"repo":"https://example.com/other"}}`, "https://example.com/other"},
	} {
		req, err := DecodeContainerRequest([]byte(c.req))
		if err != nil {
			t.Fatal(err)
		}
		req, _, err = s.resolveCreate(ctx, req, "")
		if err != nil {
			t.Fatalf("%s: %v", c.req, err)
		}
		got := ""
		if d := s.requestDotfiles(req); d != nil {
			got = d.Repo
		}
		if got != c.want {
			t.Errorf("%s: dotfiles repo %q, want %q", c.req, got, c.want)
		}
	}
}
