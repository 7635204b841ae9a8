//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package tooltest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/plugins/mock"
)

// With the Podman build tags (make test sets them) every tool test also
// runs on a real container. The backend is chosen by name: each test
// package links it (a tagged podman_test.go importing plugins/podman), since
// only plugins/podman and the CLI may depend on the Podman bindings and this
// package is not a test file.
func init() {
	Backends = append(Backends, Backend{Name: "podman", Real: true, Lifecycle: true, Setup: podmanSetup, Probe: podmanProbe})
}

// podmanImage is the image scripts/setup-podman.sh builds without a
// registry, unless WAI_PODMAN_IMAGE names another.
func podmanImage() string {
	if v := os.Getenv("WAI_PODMAN_IMAGE"); v != "" {
		return v
	}
	return "localhost/wai-python:bookworm"
}

func podmanSetup(t *testing.T, cfg *host.Config) (*mock.Backend, []host.Option) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	cfg.Backend = "podman"
	pc := map[string]any{"image": podmanImage(), "name_prefix": "wai-tooltest-" + hex.EncodeToString(b)}
	if PodmanAgent {
		pc["agent_path"] = agentPath(t)
	}
	cfg.Backends["podman"] = pc
	return nil, nil
}

// podmanProbe runs one command: no service or no image skips the test
// here and fails it on CI, where scripts/setup-podman.sh has run.
func podmanProbe(t *testing.T, k *host.Kernel) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := k.Session(ctx, "", host.SessionOptions{})
	if err == nil {
		defer s.Close(context.WithoutCancel(ctx))
		_, err = s.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"true"}})
	}
	if errors.Is(err, backend.ErrUnavailable) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Podman is required on CI (make test runs scripts/setup-podman.sh first): %v", err)
		}
		t.Skipf("no usable Podman service (run scripts/setup-podman.sh as root): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}
