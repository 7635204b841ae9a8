package host

import (
	"context"

	"github.com/wai-dev/wai/host/backend"
)

// imageBuilder is the configured backend's ImageBuilder, with the options
// that backend would be opened with.
func (k *Kernel) imageBuilder(op string) (backend.ImageBuilder, backend.Options, error) {
	name := k.cfg.Backend
	b, ok := backend.ImageBuilderOf(name)
	if !ok {
		return nil, backend.Options{}, backend.Errorf(backend.ErrUnavailable, op, "",
			"backend %q builds no images: purpose images are built by the podman backend (backend = \"podman\")", name)
	}
	opts, err := k.backendOptions(name)
	if err != nil {
		return nil, backend.Options{}, err
	}
	if opts, err = opts.WithDefaults(); err != nil {
		return nil, backend.Options{}, err
	}
	return b, opts, nil
}

// ImagePurposes lists the purposes the configured backend builds images
// for; ErrUnavailable when it builds none.
func (k *Kernel) ImagePurposes() ([]string, error) {
	b, _, err := k.imageBuilder("image")
	if err != nil {
		return nil, err
	}
	return b.Purposes(), nil
}

// Images describes each purpose image of the configured backend.
func (k *Kernel) Images(ctx context.Context) ([]backend.ImageRef, error) {
	b, opts, err := k.imageBuilder("image ls")
	if err != nil {
		return nil, err
	}
	refs, err := b.Images(ctx, opts)
	if err != nil {
		return nil, k.atConfigLine(k.cfg.Backend, err)
	}
	return refs, nil
}

// BuildImage builds the purpose image of the configured backend, unless
// one of the current recipe exists (and opts.Force is not set).
func (k *Kernel) BuildImage(ctx context.Context, purpose string, opts backend.ImageBuild) (backend.ImageRef, error) {
	b, bopts, err := k.imageBuilder("image build")
	if err != nil {
		return backend.ImageRef{}, err
	}
	ref, err := b.BuildImage(ctx, bopts, purpose, opts)
	if err != nil {
		return ref, k.atConfigLine(k.cfg.Backend, err)
	}
	return ref, nil
}
