package podman

import "github.com/wai-dev/wai/host/backend"

// ImageRef is a purpose image: its name, the recipe hash it was (or will
// be) built from, and where it stands on the service.
type ImageRef = backend.ImageRef

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
	// OnDemand: a create needs the image; unless Allowed (the config's
	// containers.build_images) a missing image is an error naming
	// `wai image build PURPOSE`, not a build.
	OnDemand, Allowed bool
	// TempDir, when set, is where the build writes its root filesystem
	// instead of $TMPDIR or /var/tmp: a caller (a test) can watch its own
	// directory without changing the process's environment.
	TempDir string
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
type ProgressEvent = backend.ImageProgress
