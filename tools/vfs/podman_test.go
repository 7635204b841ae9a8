//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

// Links the podman backend, which internal/tooltest adds to the backends
// the contract runs on under the same tags.
import _ "github.com/wai-dev/wai/plugins/podman"
