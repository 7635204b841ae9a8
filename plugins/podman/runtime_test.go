//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/wai-dev/wai/host/backend"
)

func TestCheckRuntime(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"", "runc", true},
		{"runc", "runc", true},
		{"runc", "/usr/sbin/runc", true},
		{"runc", "", true}, // an inspect without the field claims nothing
		{"crun", "runc", false},
	} {
		b := &Backend{cfg: Config{Runtime: c.want}}
		err := b.checkRuntime("wai-test-x", c.got)
		if (err == nil) != c.ok {
			t.Errorf("runtime %q, container ran with %q: err %v, want ok=%v", c.want, c.got, err, c.ok)
		}
		if err != nil && (!errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "[engine]")) {
			t.Errorf("refusal is not ErrInvalid saying how to pin the service's runtime: %v", err)
		}
	}
}

// A runtime in [backends.podman] that the service does not apply must not
// be ignored silently: either the container really runs on it, or opening
// the session fails and says so.
func TestConfiguredRuntimeIsAppliedOrRefused(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.DefaultLimits(), nil)
	w := openTest(t, b, false)
	if res := sh(t, w, "true"); res.ExitCode != 0 {
		t.Fatalf("default runtime: %+v", res)
	}
	data, err := inspectRuntime(t, b, w)
	if err != nil {
		t.Fatal(err)
	}
	other := map[string]string{"runc": "crun", "crun": "runc"}[data]
	if other == "" {
		t.Skipf("the service runs %q; no other runtime to ask for", data)
	}
	b2 := newTestBackend(t, backend.DefaultLimits(), map[string]any{"runtime": other})
	w2 := openTest(t, b2, false)
	res, err := w2.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}})
	t.Logf("service default %s, runtime = %q configured: %v", data, other, err)
	switch {
	case err == nil:
		got, ierr := inspectRuntime(t, b2, w2)
		if ierr != nil || got != other {
			t.Fatalf("runtime = %q configured, the command ran (%+v) on %q (%v)", other, res, got, ierr)
		}
	case errors.Is(err, backend.ErrInvalid):
		if !strings.Contains(err.Error(), "ignores a container's runtime") {
			t.Fatalf("refusal does not say why: %v", err)
		}
	case strings.Contains(err.Error(), "cgroup"):
		// The service applied it, and the runtime cannot run here; the
		// start error explains that (TestNewcomer covers its wording).
	default:
		t.Fatalf("runtime = %q: unexpected error %v", other, err)
	}
}

// inspectRuntime is the base name of the OCI runtime w's container runs on.
func inspectRuntime(t *testing.T, b *Backend, w *Workspace) (string, error) {
	t.Helper()
	cctx, err := b.svc.ctx(bg)
	if err != nil {
		return "", err
	}
	data, err := containers.Inspect(cctx, w.ContainerName(), nil)
	if err != nil {
		return "", err
	}
	return filepath.Base(data.OCIRuntime), nil
}

// A failed start names its known causes' fixes and keeps its kind.
func TestStartFailedAdvice(t *testing.T) {
	t.Parallel()
	b := &Backend{svc: &service{}}
	for cause, advice := range map[string]string{
		"preparing container x for attach: write child: broken pipe":          "working directory was deleted",
		"crun: cgroups in hybrid mode not supported":                          "runc",
		"runc create failed: setrlimit RLIMIT_NPROC: operation not permitted": "ulimit -Hn",
	} {
		err := startFailed(b, "wai-test-x", errors.New(cause), bg)
		if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), advice) || !strings.Contains(err.Error(), cause) {
			t.Errorf("start failing with %q: got %v, want ErrUnavailable with the cause and %q", cause, err, advice)
		}
	}
}
