//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/internal/gittest"
	"github.com/wai-dev/wai/internal/plugbuild"
	"github.com/wai-dev/wai/plugins/podman"
)

// builtImage is the image a try-repo note says it built.
var builtImage = regexp.MustCompile(`built the repository's Dockerfile into (localhost/wai-tryrepo-[0-9a-f]+:latest)`)

// With build_dockerfiles on (and container_safety allowing the build),
// try-repo builds a Dockerfile FROM the local general image and the
// container runs the result (its RUN steps had no network); a FROM that
// is not local fails fast (never pulled), as does a failing RUN, and the
// general image runs with the build's error in a note.
func TestTryRepoDockerfilePodman(t *testing.T) {
	t.Parallel()
	id := testID(t)
	top := "default_policies = [\"blocklist\"]\n[[policies]]\nname = \"container_safety\"\nconfig = { allow_dockerfile_build = true }\n"
	table := podmanTable("wai-tdf-"+id, "") + "[backends.podman.containers]\nbuild_dockerfiles = true\n"
	wai := containersCLI(t, writePodmanConfig(t, plugbuild.StateDir(t), top, table))
	general, err := podman.PurposeRecipe("general")
	if err != nil {
		t.Fatal(err)
	}
	good := gittest.Repo(t, filepath.Join(t.TempDir(), "good"), map[string]string{
		"Dockerfile": "FROM " + general.ImageName() + "\nUSER root\nRUN echo built > /built && ls /sys/class/net > /nets\n",
	})
	name := "wai-tdf-good-" + id
	t.Cleanup(func() { _ = exec.Command("podman", "rm", "--force", name).Run() })
	r := wai("create", "--name", name, "--purpose", "try-repo", "--repo", "file://"+good)
	m := builtImage.FindStringSubmatch(r.stderr)
	if r.code != 0 || m == nil {
		t.Fatalf("create from a buildable Dockerfile: %+v", r)
	}
	t.Cleanup(func() { _ = exec.Command("podman", "rmi", "--force", m[1]).Run() })
	// RUN steps get no network (allow_network_egress is off): lo only.
	if r := wai("exec", name, "--", "cat /built /nets"); r.code != 0 || r.stdout != "built\nlo\n" {
		t.Errorf("the container does not run the built image, built without a network: %+v", r)
	}
	out, err := exec.Command("podman", "image", "inspect", "--format", `{{index .Labels "wai.managed"}} {{index .Labels "wai.kind"}}`, m[1]).Output()
	if err != nil || string(out) != "true tryrepo-image\n" {
		t.Errorf("labels of %s: %q, %v", m[1], out, err)
	}

	bad := gittest.Repo(t, filepath.Join(t.TempDir(), "bad"), map[string]string{
		"Dockerfile": "FROM docker.io/library/nosuch:latest\nRUN echo never > /built\n",
	})
	bname := "wai-tdf-bad-" + id
	t.Cleanup(func() { _ = exec.Command("podman", "rm", "--force", bname).Run() })
	start := time.Now()
	r = wai("create", "--name", bname, "--purpose", "try-repo", "--repo", "file://"+bad)
	took := time.Since(start)
	if r.code != 0 || !strings.Contains(r.stderr, "building the repository's Dockerfile failed") ||
		!strings.Contains(r.stderr, "nosuch") || !strings.Contains(r.stderr, "profile general") {
		t.Errorf("create from a Dockerfile with a missing FROM: %+v", r)
	}
	if took > 30*time.Second {
		t.Errorf("the failed build took %s: a missing FROM must fail fast, not wait on a registry", took)
	}
	if r := wai("exec", bname, "--", "test ! -e /built && echo general"); r.code != 0 || r.stdout != "general\n" {
		t.Errorf("the fallback container: %+v", r)
	}
	// A failing RUN: the general image, the step's own output quoted.
	fail := gittest.Repo(t, filepath.Join(t.TempDir(), "fail"), map[string]string{
		"Dockerfile": "FROM " + general.ImageName() + "\nRUN echo no-such-toolchain >&2; exit 3\n",
	})
	fname := "wai-tdf-fail-" + id
	t.Cleanup(func() { _ = exec.Command("podman", "rm", "--force", fname).Run() })
	r = wai("create", "--name", fname, "--purpose", "try-repo", "--repo", "file://"+fail)
	if r.code != 0 || !strings.Contains(r.stderr, "building the repository's Dockerfile failed") ||
		!strings.Contains(r.stderr, "no-such-toolchain") || !strings.Contains(r.stderr, "profile general") {
		t.Errorf("create from a Dockerfile whose RUN fails: %+v", r)
	}
	for _, n := range []string{name, bname, fname} {
		if r := wai("rm", "--force", n); r.code != 0 {
			t.Errorf("rm %s: %+v", n, r)
		}
	}
}
