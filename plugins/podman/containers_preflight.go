//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"fmt"

	"github.com/containers/podman/v5/pkg/bindings/images"
	"golang.org/x/sys/unix"

	"github.com/wai-dev/wai/host/backend"
)

// ContainersPreflight checks the service, the default image, the
// seccomp profile and free disk space.
func (b *Backend) ContainersPreflight(ctx context.Context) (backend.ContainerPreflight, error) {
	pf := backend.ContainerPreflight{Runtime: "podman"}
	add := func(name string, ok bool, detail, guidance string) {
		c := backend.PreflightCheck{Name: name, Passed: ok, Detail: detail}
		if !ok {
			c.Guidance = guidance
		}
		pf.Checks = append(pf.Checks, c)
	}
	cctx, err := b.svc.ctx(ctx)
	add("service", err == nil, fmt.Sprintf("Podman service at %s", b.cfg.URL),
		fmt.Sprintf("start the Podman service (as root: scripts/setup-podman.sh; or `systemctl start podman.socket`): %v", err))
	if err == nil {
		image := b.containersImage(ctx)
		ok, ierr := images.Exists(cctx, image, nil)
		add("image", ierr == nil && ok, "default image "+image,
			"build or load the image where the service runs (scripts/setup-podman.sh builds "+LocalImage+"), or name another with containers.image in [backends.podman]")
	}
	_, serr := writeSeccompProfile(b.seccompDir)
	add("seccomp_profile", serr == nil, "the profile that denies user namespaces", fmt.Sprintf("make %s writable: %v", b.seccompDir, serr))
	var st unix.Statfs_t
	if err := unix.Statfs(b.cfg.fixedDir(), &st); err == nil {
		free := int64(st.Bavail) * st.Bsize
		add("disk_space", free >= 1<<30, fmt.Sprintf("%d MiB free under %s", free>>20, b.cfg.fixedDir()),
			"free disk space: below 1 GiB containers and their images will fail")
	}
	pf.Checks = append(pf.Checks, b.gpuCheck())
	pf.Ready = true
	failed := 0
	for _, c := range pf.Checks {
		if !c.Passed && !c.Optional {
			pf.Ready = false
			failed++
		}
	}
	pf.Summary = "ready: containers can be created"
	if !pf.Ready {
		pf.Summary = fmt.Sprintf("not ready: %d check(s) failed; follow their guidance", failed)
	}
	return pf, ctx.Err()
}
