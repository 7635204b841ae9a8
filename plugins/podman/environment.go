//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Interface guard
var _ backend.Describer = (*Backend)(nil)

// Environment describes the session container as spec builds it: a
// read-only root, /tmp a tmpfs of tmpfs_size that goes with the container
// (idle_timeout), and $HOME writable only if env makes it /tmp or the
// workspace itself. A directory below them is not: it exists in no fresh
// container (nothing makes it), so `git config --global` there fails as
// on the read-only root, and the model must be told so.
func (b *Backend) Environment() backend.Environment {
	home := b.cfg.Env["HOME"]
	writable := home == "/tmp" || home == ContainerWorkspace
	return backend.Environment{ScratchDir: "/tmp", ScratchBytes: b.cfg.tmpfsBytes,
		ScratchIdle: time.Duration(b.cfg.IdleTimeout), Home: home, HomeWritable: writable}
}
