package backend

import "context"

// DockerfileBuilder is implemented by Containers backends that can build
// a repository's Dockerfile into an image for a try-repo create. The
// kernel finds it by type assertion on the session's Containers; a
// backend without it (or with BuildsDockerfiles false) gets the general
// image and a note instead.
type DockerfileBuilder interface {
	// BuildsDockerfiles reports whether the backend's configuration
	// allows building (podman: containers.build_dockerfiles); off by
	// default, as a build runs the repository's RUN steps.
	BuildsDockerfiles() bool
	// BuildDockerfile builds b.ContextDir's top-level Dockerfile with
	// that directory as the build context, never pulling a base image.
	// A failed build is ErrUnavailable and leaves no image behind; its
	// last output lines are in the error and in the result's Output.
	BuildDockerfile(ctx context.Context, owner ContainerOwner, b DockerfileBuild) (DockerfileImage, error)
}

// DockerfileBuild is one DockerfileBuilder.BuildDockerfile.
type DockerfileBuild struct {
	// ContextDir is a host directory holding the Dockerfile at its root.
	ContextDir string
	// Key names what is built (the repository URL and commit): the
	// image's tag derives from it, so one source maps to one image.
	Key string
	// Progress, when set, gets each step of the build; it must not block.
	Progress func(ImageProgress)
}

// DockerfileImage is the image a Dockerfile build made.
type DockerfileImage struct {
	// Name is the image reference, e.g. localhost/wai-tryrepo-HASH:latest.
	Name string `json:"name"`
	ID   string `json:"id,omitempty"`
	// Output is the build's output: its start and its end when long,
	// with a marker where the middle was cut.
	Output string `json:"output,omitempty"`
}
