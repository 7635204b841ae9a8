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
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "make build") {
		t.Errorf("Open: %v, want ErrUnavailable saying to build with make build", err)
	}
	cfg, _ := ParseConfig(nil, t.TempDir())
	if _, err := List(bg, cfg); !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("List: %v", err)
	}
	if _, err := GC(bg, cfg, true); !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("GC: %v", err)
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
