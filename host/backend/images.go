package backend

import "context"

// ImageBuilder is implemented by drivers (see RegisterDriver) that build,
// on this machine, the images agents ask for by purpose (python, node, go,
// …) from recipes they carry, so no registry is needed. Like Preflighter
// it sits on the driver, not an opened backend: `wai image` runs before any
// session. The kernel reaches it for its configured backend
// (Kernel.BuildImage, Kernel.Images).
type ImageBuilder interface {
	// Purposes lists the purposes the driver has recipes for, sorted.
	Purposes() []string
	// Images describes each purpose's image for the recipes the driver
	// carries now: present and current, stale, or missing.
	Images(ctx context.Context, opts Options) ([]ImageRef, error)
	// BuildImage builds the purpose's image, unless an image of its
	// current recipe exists and b.Force is not set. An unknown purpose is
	// ErrInvalid naming the purposes.
	BuildImage(ctx context.Context, opts Options, purpose string, b ImageBuild) (ImageRef, error)
}

// ImageBuild tunes ImageBuilder.BuildImage.
type ImageBuild struct {
	// Force rebuilds even when an image of the current recipe exists.
	Force bool
	// Progress, when set, is called with every step of the build, from
	// the building goroutine; it must not block for long.
	Progress func(ImageProgress)
	// OnDemand: a containers create needs the image. A missing image is
	// built only when the backend's configuration allows building on
	// demand; otherwise the error (ErrUnavailable) names the command that
	// builds it. An existing image is returned either way.
	OnDemand bool
}

// ImageRef is a purpose image: its name, the recipe hash it was (or will
// be) built from, and where it stands.
type ImageRef struct {
	Purpose string `json:"purpose"`
	// Name is the image reference, e.g. localhost/wai-PURPOSE:HASH.
	Name string `json:"name"`
	// Recipe is the recipe's hash.
	Recipe string `json:"recipe"`
	// ID is the image ID when the image exists.
	ID string `json:"id,omitempty"`
	// Exists: the image is there.
	Exists bool `json:"exists"`
	// Current: the image was built from the recipe the driver carries.
	Current bool `json:"current"`
	// Built: BuildImage built it just now (false on a cache hit).
	Built bool `json:"built,omitempty"`
}

// ImageProgress is one step of an image build.
type ImageProgress struct {
	Phase string `json:"phase"`
	// Message is for people: a build step, bytes imported, ….
	Message string `json:"message"`
	// Current and Total count bytes where that makes sense (Total 0:
	// unknown).
	Current int64 `json:"current,omitempty"`
	Total   int64 `json:"total,omitempty"`
}

// ImageBuilderOf returns the named backend's ImageBuilder; ok is false
// when the backend is not linked in or builds no images.
func ImageBuilderOf(name string) (b ImageBuilder, ok bool) {
	d, err := driver(name)
	if err != nil {
		return nil, false
	}
	b, ok = d.(ImageBuilder)
	return b, ok
}
