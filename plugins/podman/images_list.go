//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"strings"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/images"
	entitiesTypes "github.com/containers/podman/v5/pkg/domain/entities/types"
)

// listImagesTries bounds listImages' retries: each one is a fresh look,
// and a removal racing every one of them is a service that keeps
// removing images, which the caller should hear about.
const listImagesTries = 4

// listImages is images.List, tried again when the service fails the list
// because an image went while it looked. Podman before 4.6 lists images
// in steps without holding its storage lock across them, so an image
// another client removes in between fails the whole list, with "image
// not known" or, for its manifest, "file does not exist" (podman#18980,
// fixed there by skipping such images); Debian 12 ships 4.3. A list that
// fails for another reason, or that fails every try, returns its error.
func listImages(cctx context.Context, opts *images.ListOptions) ([]*entitiesTypes.ImageSummary, error) {
	return listImagesWith(cctx, opts, images.List)
}

// listImagesWith is listImages over list (images.List but in tests).
func listImagesWith(cctx context.Context, opts *images.ListOptions,
	list func(context.Context, *images.ListOptions) ([]*entitiesTypes.ImageSummary, error)) ([]*entitiesTypes.ImageSummary, error) {
	var (
		l   []*entitiesTypes.ImageSummary
		err error
	)
	for try := 1; ; try++ {
		l, err = list(cctx, opts)
		if err == nil || !imageWentWhileListing(err) || try == listImagesTries {
			return l, err
		}
		select {
		case <-cctx.Done():
			return nil, err
		case <-time.After(time.Duration(try) * 50 * time.Millisecond):
		}
	}
}

// imageWentWhileListing reports the errors of an image list that raced an
// image's removal.
func imageWentWhileListing(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "image not known") ||
		strings.Contains(msg, "for image with ID") && strings.Contains(msg, "file does not exist")
}
