//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// A create's on-demand request finds the images scripts/setup-podman.sh
// built, for every purpose, without building (build_images is off): the
// recipe hashes of the script and of wai agree.
//
// Not parallel, like TestPurposeImageBuildEndToEnd: the python image's
// build lock may be held by TestBuildCancelCleansUp's build for a minute,
// and serial tests run before parallel ones start.
func TestOnDemandFindsSetupImages(t *testing.T) {
	needPodman(t)
	cfg := parsedTestConfig(t, nil)
	for _, p := range Purposes() {
		ref, err := driver{}.BuildImage(bg, backend.Options{Config: testConfig(t, nil), StateDir: t.TempDir()}, p,
			backend.ImageBuild{OnDemand: true})
		if err != nil || !ref.Exists || !ref.Current || ref.Built {
			t.Errorf("%s: %+v, %v (scripts/setup-podman.sh builds it)", p, ref, err)
		}
	}
	if cfg.Containers.BuildImages {
		t.Error("build_images is on by default")
	}
	on, err := ParseConfig(testConfig(t, map[string]any{"containers": map[string]any{"build_images": true}}), t.TempDir())
	if err != nil || !on.Containers.BuildImages {
		t.Errorf("containers.build_images = true: %v", err)
	}
}
