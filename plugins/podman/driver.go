package podman

import (
	"context"

	"github.com/wai-dev/wai/host/backend"
)

func init() { backend.RegisterDriver("podman", driver{}) }

// driver opens the backend and checks, without opening it, whether this
// machine can run it (wai preflight). In a build without the Podman
// bindings both say how to build them in.
type driver struct{}

// Interface guards
var (
	_ backend.Driver       = driver{}
	_ backend.Preflighter  = driver{}
	_ backend.ImageBuilder = driver{}
)

func (driver) Open(ctx context.Context, opts backend.Options) (backend.Backend, error) {
	return open(ctx, opts)
}

// Preflight runs Preflight on the configuration opts carries, resolved as
// New would resolve it.
func (driver) Preflight(ctx context.Context, opts backend.Options) ([]backend.Check, error) {
	cfg, err := ParseConfig(opts.Config, opts.StateDir)
	if err != nil {
		return nil, err
	}
	return Preflight(ctx, cfg), nil
}

// Purposes lists the purposes with a recipe (Purposes).
func (driver) Purposes() []string { return Purposes() }

// Images lists the purpose images on the service opts configures.
func (driver) Images(ctx context.Context, opts backend.Options) ([]backend.ImageRef, error) {
	cfg, err := ParseConfig(opts.Config, opts.StateDir)
	if err != nil {
		return nil, err
	}
	return PurposeImages(ctx, cfg)
}

// BuildImage builds a purpose image for the service opts configures.
func (driver) BuildImage(ctx context.Context, opts backend.Options, purpose string, b backend.ImageBuild) (backend.ImageRef, error) {
	cfg, err := ParseConfig(opts.Config, opts.StateDir)
	if err != nil {
		return backend.ImageRef{}, err
	}
	return BuildPurposeImage(ctx, cfg, purpose, BuildOptions{Force: b.Force, Progress: b.Progress,
		OnDemand: b.OnDemand, Allowed: cfg.Containers.BuildImages})
}
