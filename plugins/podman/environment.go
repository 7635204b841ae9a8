//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Interface guard
var _ backend.Describer = (*Backend)(nil)

// Environment describes the session container as spec builds it: a
// read-only root, /tmp a tmpfs of tmpfs_size that goes with the container
// (idle_timeout), and $HOME writable only if env puts it on /tmp or the
// workspace.
func (b *Backend) Environment() backend.Environment {
	home := b.cfg.Env["HOME"]
	writable := false
	for _, dir := range []string{"/tmp", ContainerWorkspace} {
		if home == dir || strings.HasPrefix(home, dir+"/") {
			writable = true
		}
	}
	return backend.Environment{ScratchDir: "/tmp", ScratchBytes: b.cfg.tmpfsBytes,
		ScratchIdle: time.Duration(b.cfg.IdleTimeout), Home: home, HomeWritable: writable}
}
