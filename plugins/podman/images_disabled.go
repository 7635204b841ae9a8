//go:build !(remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp)

package podman

import "context"

// PurposeImage would look up a purpose image; this build cannot talk to Podman.
func PurposeImage(ctx context.Context, cfg Config, purpose string) (ImageRef, error) {
	return ImageRef{}, notBuilt("image", purpose)
}

// PurposeImages would list the purpose images; this build cannot talk to Podman.
func PurposeImages(ctx context.Context, cfg Config) ([]ImageRef, error) {
	return nil, notBuilt("image ls", "")
}

// BuildPurposeImage would build a purpose image; this build cannot talk to Podman.
func BuildPurposeImage(ctx context.Context, cfg Config, purpose string, opts BuildOptions) (ImageRef, error) {
	return ImageRef{}, notBuilt("image build", purpose)
}
