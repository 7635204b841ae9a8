//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/wai-dev/wai/internal/plugbuild"
	"github.com/wai-dev/wai/plugins/podman"
)

// A process whose first act is `wai containers create`, on a machine set
// up by scripts/setup-podman.sh and a config naming no image (as
// wai.example.toml): the create runs podman.LocalImage, as a session
// would, rather than failing preflight on the unconfigured registry
// image. A create that is not ready names the failed check and its
// guidance.
func TestContainersCreateFirstPodman(t *testing.T) {
	t.Parallel()
	bin := buildWithBundled(t)
	id := testID(t)
	state := plugbuild.StateDir(t)
	config := writePodmanConfig(t, state, "", fmt.Sprintf("name_prefix = %q\n", "wai-first-"+id))
	podmanServes(t, config)
	wai := func(config string, args ...string) result {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"containers", args[0], "--config", config}, args[1:]...)...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		r := result{stdout: out.String(), stderr: errb.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return r
	}
	name := "wai-first-" + id
	removeAtEnd(t, func(a ...string) result { return wai(config, a...) }, name)
	if r := wai(config, "create", "--name", name); r.code != 0 || !strings.Contains(r.stdout, "created "+name) {
		t.Fatalf("the first create of a fresh process: %+v", r)
	}
	if r := wai(config, "ls", "--json"); !strings.Contains(r.stdout, `"image": "`+podman.LocalImage+`"`) {
		t.Errorf("ls --json: %+v; want %s running", r, podman.LocalImage)
	}
	missing := writePodmanConfig(t, state, "", fmt.Sprintf("name_prefix = %q\n[backends.podman.containers]\nimage = \"localhost/wai-no-such-image:%s\"\n", "wai-first-"+id, id))
	removeAtEnd(t, func(a ...string) result { return wai(missing, a...) }, name+"-x")
	if r := wai(missing, "create", "--name", name+"-x"); r.code == 0 || !strings.Contains(r.stderr, "image failed (default image localhost/wai-no-such-image") ||
		!strings.Contains(r.stderr, "containers.image") {
		t.Errorf("a create that is not ready: %+v; want the failed check (image) and its guidance", r)
	}
}
