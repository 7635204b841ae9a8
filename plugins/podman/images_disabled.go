//go:build !(remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp)

package podman

import (
	"context"

	"github.com/wai-dev/wai/host/backend"
)

// PurposeImage would look up a purpose image; this build cannot talk to Podman.
func PurposeImage(ctx context.Context, cfg Config, purpose string) (ImageRef, error) {
	return ImageRef{}, backend.Errorf(backend.ErrUnavailable, "image", purpose, buildHint)
}

// PurposeImages would list the purpose images; this build cannot talk to Podman.
func PurposeImages(ctx context.Context, cfg Config) ([]ImageRef, error) {
	return nil, backend.Errorf(backend.ErrUnavailable, "image ls", "", buildHint)
}

// BuildPurposeImage would build a purpose image; this build cannot talk to Podman.
func BuildPurposeImage(ctx context.Context, cfg Config, purpose string, opts BuildOptions) (ImageRef, error) {
	return ImageRef{}, backend.Errorf(backend.ErrUnavailable, "image build", purpose, buildHint)
}
