//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"strings"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/bindings/volumes"
	entitiesTypes "github.com/containers/podman/v5/pkg/domain/entities/types"

	"github.com/wai-dev/wai/host/backend"
)

const (
	// filesVolumeMargin is how long gc leaves a files volume of another
	// wai build after the service made it, used or not: a wai process of
	// that build may hold its paths and be about to create a container
	// (between the listing gc reads and the create). A process that finds
	// its volume gone all the same makes it again (forgetLostFiles).
	filesVolumeMargin = 24 * time.Hour
	// fillMargin is how long gc leaves a fill container: a fill takes
	// seconds, so one this old belongs to a process killed midway, never
	// to one filling now.
	fillMargin = 10 * time.Minute
	// fillInfix separates a fill container's volume from its own id.
	fillInfix = "-fill-"
)

// GC items for what files volumes leave behind.
const (
	gcKindFilesVolume = "files-volume"
	gcKindFill        = "fill-container"
)

// filesScope limits a files sweep to the files volumes it accepts (and
// their fill containers); nil takes all. Tests sweep only their own.
type filesScope func(volume string) bool

func (s filesScope) takes(volume string) bool { return s == nil || s(volume) }

// collectFilesScope is the files sweep's scope in CollectGarbage: every
// files volume (nil), except in tests, which share the service with other
// tests and other wai builds and sweep only the volumes they made (this
// package's) or none (LimitFilesSweep).
var collectFilesScope filesScope

// LimitFilesSweep limits what every later CollectGarbage in this process
// sweeps of the service's files volumes, and their fill containers, to the
// volumes take accepts. It is for the tests of programs that link this
// backend and run wai gc: they share the Podman service with other test
// runs and with real users, whose files volumes are not theirs to remove.
// Call it before any sweep starts (from init or TestMain); wai itself
// never calls it.
func LimitFilesSweep(take func(volume string) bool) { collectFilesScope = take }

// gcFiles removes what files volumes leave on the service: fill containers
// of processes killed mid-fill (older than fillMargin), then files volumes
// of other wai builds (their name is not this backend's) made more than
// filesVolumeMargin ago that no container uses. Use is decided here, not
// by Podman: a container names wai-agent by a path inside the volume (a
// bind mount), which Podman does not count. The seccomp profile is read
// only when a container is created (Podman compiles it into the
// container's spec and does not report its path), so a bind mount is the
// only lasting use. The files belong to no session: every wai gc sweeps
// them, whatever its user scope.
func (b *Backend) gcFiles(ctx context.Context, scope filesScope, now time.Time, rep *backend.GCReport) {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		rep.Errors = append(rep.Errors, err)
		return
	}
	b.gcFills(ctx, cctx, scope, now, rep)
	current, _, err := b.serviceFileSet()
	if err != nil {
		// Without this wai's own name, nothing tells the current volume.
		rep.Errors = append(rep.Errors, err)
		return
	}
	vs, err := managedVolumes(ctx, cctx, b.svc, kindFiles)
	if err != nil {
		rep.Errors = append(rep.Errors, err)
		return
	}
	var users []mountUse
	listed := false
	for _, v := range vs {
		if !scope.takes(v.Name) {
			continue
		}
		keep := ""
		switch {
		case v.Name == current:
			keep = "the files of this wai"
		case now.Sub(v.CreatedAt) < filesVolumeMargin:
			keep = "made less than " + filesVolumeMargin.String() + " ago: a wai with those files (another build or agent_path) may still use it"
		case !listed:
			if users, err = b.mountUses(ctx, cctx); err != nil {
				rep.Errors = append(rep.Errors, err)
				return
			}
			listed = true
		}
		if keep == "" {
			if c := usedBy(users, v.Name, v.Mountpoint); c != "" {
				keep = "container " + c + " uses it"
			}
		}
		item := backend.GCItem{Kind: gcKindFilesVolume, Name: v.Name}
		name := v.Name
		gcOne(ctx, rep, item, keep, "files of another wai build, unused", func(ctx context.Context) error {
			// Not forced: a container that mounted it as a volume since
			// (a fill) makes the service refuse, and the volume stays.
			if err := volumes.Remove(cctx, name, nil); err != nil && !volumeNotFound(err) {
				return b.svc.wrap(ctx, "gc", name, err)
			}
			return nil
		})
	}
}

// gcFills removes fill containers older than fillMargin.
func (b *Backend) gcFills(ctx, cctx context.Context, scope filesScope, now time.Time, rep *backend.GCReport) {
	l, err := containers.List(cctx, new(containers.ListOptions).WithAll(true).
		WithFilters(map[string][]string{"label": {labelManaged + "=true", labelKind + "=" + kindFiles}}))
	if err != nil {
		rep.Errors = append(rep.Errors, b.svc.wrap(ctx, "gc", "fill containers", err))
		return
	}
	for _, c := range l {
		if len(c.Names) == 0 {
			continue
		}
		volume, _, ok := strings.Cut(c.Names[0], fillInfix)
		if !ok || !scope.takes(volume) {
			continue
		}
		keep := ""
		if now.Sub(c.Created) < fillMargin {
			keep = "made less than " + fillMargin.String() + " ago: a fill may be under way"
		}
		item := backend.GCItem{Kind: gcKindFill, Name: c.Names[0]}
		id := c.ID
		gcOne(ctx, rep, item, keep, "left by a fill that never finished", func(ctx context.Context) error { return b.remove(ctx, id) })
	}
}

// mountUse is one mount of a container: its source path, and the name of
// the volume when it is a volume mount.
type mountUse struct{ container, source, volume string }

// mountUses lists every container's mounts on the service, wai's or not
// and running or not (a stopped container needs its bind sources to start
// again).
func (b *Backend) mountUses(ctx, cctx context.Context) ([]mountUse, error) {
	l, err := containers.List(cctx, new(containers.ListOptions).WithAll(true))
	if err != nil {
		return nil, b.svc.wrap(ctx, "gc", "containers", err)
	}
	var out []mountUse
	for _, c := range l {
		data, err := containers.Inspect(cctx, c.ID, nil)
		if notFound(err) {
			continue // removed since the listing: uses nothing
		}
		if err != nil {
			return nil, b.svc.wrap(ctx, "gc", c.ID, err)
		}
		for _, m := range data.Mounts {
			out = append(out, mountUse{container: data.Name, source: m.Source, volume: m.Name})
		}
	}
	return out, nil
}

// usedBy names a container that mounts the volume, or a path inside its
// mount point; "" when none does.
func usedBy(users []mountUse, volume, mountpoint string) string {
	for _, u := range users {
		if u.volume == volume || (mountpoint != "" && (u.source == mountpoint || strings.HasPrefix(u.source, mountpoint+"/"))) {
			return u.container
		}
	}
	return ""
}

// managedVolumes lists wai's volumes of one kind on the service, for gc.
func managedVolumes(ctx, cctx context.Context, svc *service, kind string) ([]*entitiesTypes.VolumeListReport, error) {
	vs, err := volumes.List(cctx, new(volumes.ListOptions).WithFilters(map[string][]string{
		"label": {labelManaged + "=true", labelKind + "=" + kind}}))
	if err != nil {
		return nil, svc.wrap(ctx, "gc", kind+" volumes", err)
	}
	return vs, nil
}
