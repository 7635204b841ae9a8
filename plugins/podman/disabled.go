//go:build !(remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp)

package podman

import (
	"context"

	"github.com/wai-dev/wai/host/backend"
)

// Built is false in a build without the Podman bindings.
const Built = false

// buildHint says how to get the real backend.
const buildHint = "this wai was built without the podman backend: build with `make build` " +
	"(or go build -tags 'remote exclude_graphdriver_btrfs exclude_graphdriver_devicemapper containers_image_openpgp')"

// notBuilt is every stand-in's error: unavailable, because this build
// lacks the backend (backend.ErrNotBuiltIn), with the build hint.
func notBuilt(op, path string) error {
	return &backend.Error{Kind: backend.ErrUnavailable, Op: op, Path: path, Msg: buildHint, Err: backend.ErrNotBuiltIn}
}

// open says that the backend is not built in.
func open(context.Context, backend.Options) (backend.Backend, error) {
	return nil, notBuilt("open", "")
}

// List would list the managed containers; this build cannot talk to Podman.
func List(ctx context.Context, cfg Config) ([]Container, error) {
	return nil, notBuilt("ps", "")
}

// GC would remove what crashed sessions left behind; this build cannot talk
// to Podman.
func GC(ctx context.Context, cfg Config, all bool) (GCReport, error) {
	return GCReport{}, notBuilt("gc", "")
}

// Preflight reports that the backend is not built in.
func Preflight(ctx context.Context, cfg Config) []Check {
	return []Check{{
		Name:   "podman backend built in",
		Status: CheckFail,
		Detail: "this wai was built without the Podman bindings",
		Fix:    "build with `make build`, or go build -tags 'remote exclude_graphdriver_btrfs exclude_graphdriver_devicemapper containers_image_openpgp' ./cmd/wai",
	}}
}
