package kubernetes

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// The backend is registered, and opening it says plainly that it is not
// available and where to read why, as ErrUnavailable (so callers and
// `wai preflight` treat it as a missing part, not a bad config).
func TestOpenSaysNotYetAvailable(t *testing.T) {
	if !slices.Contains(backend.Registered(), Name) {
		t.Fatalf("backend %q is not registered (registered: %v)", Name, backend.Registered())
	}
	b, err := backend.Open(context.Background(), Name, backend.Options{})
	if b != nil {
		t.Fatalf("Open returned a backend: %v", b)
	}
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Fatalf("Open error %v is not ErrUnavailable", err)
	}
	// Setting the machine up cannot help: the kernel leads with the
	// reason for a backend not built in, not with setup advice.
	if !errors.Is(err, backend.ErrNotBuiltIn) {
		t.Errorf("Open error %v does not wrap ErrNotBuiltIn", err)
	}
	for _, want := range []string{"not yet available", "docs/KUBERNETES.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open error %q does not say %q", err, want)
		}
	}
}

// `wai preflight` with backend = "kubernetes" fails its one check, saying
// the backend is not yet available and where the design is.
func TestPreflightSaysNotYetAvailable(t *testing.T) {
	checks, ok, err := backend.Preflight(context.Background(), Name, backend.Options{})
	if !ok || err != nil || len(checks) != 1 {
		t.Fatalf("Preflight = %+v, %v, %v", checks, ok, err)
	}
	c := checks[0]
	if c.Status != backend.CheckFail || !strings.Contains(c.Detail, "not yet available") || !strings.Contains(c.Fix, "docs/KUBERNETES.md") {
		t.Errorf("check %+v", c)
	}
}
