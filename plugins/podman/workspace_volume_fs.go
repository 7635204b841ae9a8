//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import "github.com/wai-dev/wai/host/backend"

// volumeFiles returns the Filesystem of a volume workspace: its files are
// on the service's machine, reachable only from inside the container, so
// wai-agent serves them there.
func (b *Backend) volumeFiles(w *Workspace) (backend.Filesystem, error) {
	return nil, backend.Errorf(backend.ErrUnavailable, "open", w.volume,
		"backend podman: this build cannot serve a volume workspace's files (wai-agent's file service is missing): set workspace = \"bind\" in [backends.podman]")
}
