// Package images holds wai's image recipes: how each local image is built
// from Debian packages (no image registry needed). scripts/setup-podman.sh
// reads them from this directory; the Go code (plugins/podman) reads the
// copies embedded here, so a wai binary can build its images anywhere.
//
// A recipe, wai-<purpose>.packages, is one item per line; "#" starts a
// comment, blank lines are ignored:
//
//	python3                 a Debian package to install
//	@include common.packages  the items of another file in this directory, here
//	@env KEY=VALUE          an environment variable of the image (ENV)
//	@label KEY=VALUE        a label of the image (LABEL)
//
// The image is Debian bookworm, mmdebstrap --variant=minbase, without
// recommends. The recipe hash (the image's wai.recipe label and its tag)
// covers the suite, the variant, the packages in order and every config
// change applied at import (see plugins/podman/recipe.go and recipe.sh).
package images

import "embed"

// Files are the recipes (*.packages) and recipe.sh.
//
//go:embed *.packages
var Files embed.FS
