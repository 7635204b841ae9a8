package podman

// ImageRef is a purpose image: its name, the recipe hash it was (or will
// be) built from, and where it stands on the service.
type ImageRef struct {
	Purpose string `json:"purpose"`
	// Name is the image reference, localhost/wai-PURPOSE:HASH.
	Name string `json:"name"`
	// Recipe is the recipe hash (the image's wai.recipe label).
	Recipe string `json:"recipe"`
	// ID is the image ID when the image exists.
	ID string `json:"id,omitempty"`
	// Exists: the image is on the service (for PurposeImage: and carries
	// the current recipe's label).
	Exists bool `json:"exists"`
	// Current: the image was built from the recipe this wai carries.
	Current bool `json:"current"`
	// Built: BuildPurposeImage built it just now (false on a cache hit).
	Built bool `json:"built,omitempty"`
}

// BuildOptions tune BuildPurposeImage.
type BuildOptions struct {
	// Force rebuilds even when an image of the current recipe exists.
	Force bool
	// Mirror is the Debian mirror mmdebstrap uses; empty: $WAI_DEBIAN_MIRROR,
	// else the first Debian mirror in apt's sources, else deb.debian.org.
	Mirror string
	// Progress, when set, is called with every step of the build, from the
	// building goroutine; it must not block for long. The CLI prints the
	// events; an MCP tool can forward them as progress notifications.
	Progress func(ProgressEvent)
}

func (o BuildOptions) progress(ev ProgressEvent) {
	if o.Progress != nil {
		o.Progress(ev)
	}
}

// Phases of an image build, in order. A cache hit reports only PhaseCached.
const (
	PhaseCached    = "cached"    // the image of the current recipe exists: nothing to do
	PhaseBootstrap = "bootstrap" // mmdebstrap downloads and installs the packages (minutes)
	PhaseImport    = "import"    // the root filesystem tarball is streamed to the service
	PhaseDone      = "done"
)

// ProgressEvent is one step of an image build.
type ProgressEvent struct {
	Phase string `json:"phase"`
	// Message is for people: an mmdebstrap step, bytes imported, ….
	Message string `json:"message"`
	// Current and Total count bytes during PhaseImport (Total 0: unknown).
	Current int64 `json:"current,omitempty"`
	Total   int64 `json:"total,omitempty"`
}
