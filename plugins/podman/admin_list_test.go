//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"testing"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/specgen"

	"github.com/wai-dev/wai/host/backend"
)

// ps and gc see sessions' containers only: a container with a kind (the
// files volume's fill container, which another process is filling, or an
// agent-managed one) is no session without a state file, and gc removed
// a fill container in the middle of another test's fill.
func TestListTakesSessionsOnly(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	cctx := onServiceCtx(t, b.svc)
	s := specgen.NewSpecGenerator(b.image(), false)
	s.Name = "wai-test-fill-" + newID()[:10]
	s.Command = []string{"true"}
	s.Labels = map[string]string{labelManaged: "true", labelKind: kindFiles}
	resp, err := containers.CreateWithSpec(cctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.removeQuiet(resp.ID)
	cs, err := List(bg, b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.ID == resp.ID {
			t.Fatalf("ps lists the fill container %s as a session's: %+v", s.Name, c)
		}
	}
	if !containerExists(t, b, s.Name) {
		t.Fatal("the fill container is gone before the test looked")
	}
}
