//go:build !(remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp)

package podman

import (
	"errors"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// Without the build tags the backend is registered but says how to get
// the real one, and so do the CLI's helpers.
func TestDisabledSaysHowToBuild(t *testing.T) {
	t.Parallel()
	_, err := backend.Open(bg, "podman", backend.Options{})
	if !errors.Is(err, backend.ErrUnavailable) || !errors.Is(err, backend.ErrNotBuiltIn) || !strings.Contains(err.Error(), "make build") {
		t.Errorf("Open: %v, want ErrUnavailable from ErrNotBuiltIn saying to build with make build", err)
	}
	cfg, _ := ParseConfig(nil, t.TempDir())
	_, listErr := List(bg, cfg)
	_, gcErr := GC(bg, cfg, true)
	_, imageErr := PurposeImage(bg, cfg, "python")
	_, imagesErr := PurposeImages(bg, cfg)
	_, buildErr := BuildPurposeImage(bg, cfg, "python", BuildOptions{})
	for what, err := range map[string]error{"List": listErr, "GC": gcErr, "PurposeImage": imageErr, "PurposeImages": imagesErr, "BuildPurposeImage": buildErr} {
		if !errors.Is(err, backend.ErrUnavailable) || !errors.Is(err, backend.ErrNotBuiltIn) {
			t.Errorf("%s: %v, want ErrUnavailable from ErrNotBuiltIn", what, err)
		}
	}
	if c := Preflight(bg, cfg); len(c) != 1 || c[0].Status != CheckFail || c[0].Fix == "" {
		t.Errorf("Preflight: %+v", c)
	}
	if c, ok, err := backend.Preflight(bg, "podman", backend.Options{StateDir: t.TempDir()}); !ok || err != nil || len(c) != 1 || c[0].Backend != "podman" || c[0].Status != CheckFail {
		t.Errorf("backend.Preflight: %+v, %v, %v; want the one failing check, through the driver", c, ok, err)
	}
	if Built {
		t.Errorf("Built is true in a build without the tags")
	}
}
