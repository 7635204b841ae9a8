//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"github.com/wai-dev/wai/internal/tooltest"
	// Links the podman backend, which internal/tooltest adds to the
	// backends these tests run on under the same tags.
	_ "github.com/wai-dev/wai/plugins/podman"
)

// Background jobs on podman run under wai-agent: mount one built from
// this repository, as bin/wai mounts the one it embeds.
func init() { tooltest.PodmanAgent = true }
