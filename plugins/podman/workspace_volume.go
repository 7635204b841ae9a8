//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/volumes"
	entitiesTypes "github.com/containers/podman/v5/pkg/domain/entities/types"
	"github.com/containers/podman/v5/pkg/specgen"

	"github.com/wai-dev/wai/host/backend"
)

// kindWorkspace is labelKind's value on a session's workspace volume (a
// volume wai may make for another purpose gets another kind).
const kindWorkspace = "workspace"

// volumeLabels are the labels of a session's workspace volume: those of
// its container, so that wai ps, rm and gc find both the same way.
func (w *Workspace) volumeLabels() map[string]string {
	return map[string]string{
		labelManaged:   "true",
		labelKind:      kindWorkspace,
		labelSession:   w.session,
		labelUser:      w.user,
		labelWorkspace: w.ref(),
		labelState:     w.statePath,
	}
}

// ref names the workspace in labels and state files: its directory, or
// volume:<name>.
func (w *Workspace) ref() string {
	return sessionPaths{dir: w.dir, volume: w.volume}.workspaceRef()
}

// makeVolume creates the session's workspace volume on the service, or
// adopts the one a kept session left; fresh reports a new, empty volume.
// The volume belongs to the container user from the start (uid/gid
// options, applied by the service), so no chown is needed later. With
// workspace_size it carries Podman's size option, which the service
// enforces with a project quota (XFS with pquota): a service that cannot
// enforce it refuses the volume, and so does Open.
func (b *Backend) makeVolume(ctx context.Context, w *Workspace) (fresh bool, err error) {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return false, err
	}
	if v, err := volumes.Inspect(cctx, w.volume, nil); err == nil {
		return false, w.checkVolumeLabels(v.Labels)
	} else if !volumeNotFound(err) {
		return false, b.svc.wrap(ctx, "open", w.volume, err)
	}
	uid, gid := b.cfg.uidGID()
	o := fmt.Sprintf("uid=%d,gid=%d", uid, gid)
	if b.cfg.workspaceBytes > 0 {
		o += fmt.Sprintf(",size=%d", b.cfg.workspaceBytes)
	}
	opts := entitiesTypes.VolumeCreateOptions{Name: w.volume, Labels: w.volumeLabels(), Options: map[string]string{"o": o}}
	if _, err := volumes.Create(cctx, opts, nil); err != nil {
		if strings.Contains(err.Error(), "already exists") {
			// Another process opened the same session meanwhile.
			if v, ierr := volumes.Inspect(cctx, w.volume, nil); ierr == nil {
				return false, w.checkVolumeLabels(v.Labels)
			}
		}
		if strings.Contains(err.Error(), "Quota") || strings.Contains(err.Error(), "size and inodes") {
			return false, backend.Errorf(backend.ErrUnavailable, "open", w.volume,
				"backend podman: workspace_size %s cannot be enforced on a volume workspace here: the service's volume storage has no project quotas (%v). "+
					"Put the service's volume path on XFS mounted with pquota, or set workspace_size = \"0\" in [backends.podman] to run without a size limit on /workspace",
				formatBytes(b.cfg.workspaceBytes), err)
		}
		return false, b.svc.wrap(ctx, "open", w.volume, err)
	}
	b.event(ctx, "runtime.podman.volume_created", w, "volume", w.volume)
	return true, nil
}

// checkVolumeLabels refuses a volume wai did not make for this session.
func (w *Workspace) checkVolumeLabels(l map[string]string) error {
	if l[labelManaged] != "true" || l[labelKind] != kindWorkspace || l[labelSession] != w.session {
		return backend.Errorf(backend.ErrUnavailable, "open", w.volume,
			"a volume named %s exists that wai did not make for this session: remove it (`podman volume rm %s`) or change name_prefix", w.volume, w.volume)
	}
	if l[labelUser] != w.user {
		return backend.Errorf(backend.ErrPermission, "open", w.volume,
			"the volume %s belongs to a session of another user: open the session under another name", w.volume)
	}
	return nil
}

// removeVolume removes a session's workspace volume, once its container is
// gone. A volume without wai's labels for that session is left alone.
func removeVolume(ctx context.Context, svc *service, name, session string) error {
	cctx, err := svc.ctx(ctx)
	if err != nil {
		return err
	}
	v, err := volumes.Inspect(cctx, name, nil)
	if volumeNotFound(err) {
		return nil
	}
	if err != nil {
		return svc.wrap(ctx, "remove", name, err)
	}
	if v.Labels[labelManaged] != "true" || v.Labels[labelKind] != kindWorkspace || v.Labels[labelSession] != session {
		return fmt.Errorf("volume %s is not session %s's workspace: left alone", name, session)
	}
	if err := volumes.Remove(cctx, name, nil); err != nil && !volumeNotFound(err) {
		return svc.wrap(ctx, "remove", name, err)
	}
	return nil
}

func volumeNotFound(err error) bool {
	return err != nil && (notFound(err) || strings.Contains(err.Error(), "no such volume") || strings.Contains(err.Error(), "no volume with name"))
}

// gcVolumes removes workspace volumes whose session is gone by the same
// verdict as directories: after gcIn removed containers and state files,
// a volume of this configuration whose state file says it may go (or
// that has none) is removed. One still mounted by a container is in use.
func gcVolumes(ctx context.Context, svc *service, cfg Config, scope gcScope, now time.Time, rep *GCReport) {
	cctx, err := svc.ctx(ctx)
	if err != nil {
		rep.Errors = append(rep.Errors, err)
		return
	}
	vs, err := managedVolumes(ctx, cctx, svc, kindWorkspace)
	if err != nil {
		rep.Errors = append(rep.Errors, err)
		return
	}
	for _, v := range vs {
		session, ref := v.Labels[labelSession], v.Labels[labelWorkspace]
		if ref != volumePrefix+v.Name || !validSession(session) || !scope.takes(cfg, session, ref) {
			continue
		}
		st, used, stErr := gcState(v.Labels[labelState])
		item := GCItem{Kind: "volume", Name: v.Name, Session: session}
		remove, why := verdict(st, used, scope.all, time.Duration(cfg.IdleTimeout), now)
		if stErr != nil && !scope.all {
			remove, why = unreadableState(stErr)
		}
		item.Reason = why
		if !remove {
			rep.Kept = append(rep.Kept, item)
			continue
		}
		if err := removeVolume(ctx, svc, v.Name, session); err != nil {
			rep.Errors = append(rep.Errors, err)
			continue
		}
		if st != nil {
			_ = removeWorkspace("", session, v.Labels[labelState], removedBy(scope.by), why)
		}
		rep.Removed = append(rep.Removed, item)
	}
}

// mountWorkspaceVolume mounts the owner session's workspace volume at
// /workspace of a managed container (mount_cwd) in a volume
// configuration. The volume must be the session's, made by its Open:
// naming a missing one would have the service make an unlabelled volume
// that the session's next Open refuses.
func (b *Backend) mountWorkspaceVolume(ctx context.Context, req backend.ContainerSpec, s *specgen.SpecGenerator) error {
	if !req.MountWorkspace || !b.cfg.volumeMode() {
		return nil
	}
	p, err := b.cfg.pathsFor(backend.WorkspaceSpec{Session: req.Owner.Session, User: req.Owner.User})
	if err != nil {
		return err
	}
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return err
	}
	v, err := volumes.Inspect(cctx, p.volume, nil)
	if volumeNotFound(err) {
		return backend.Errorf(backend.ErrUnavailable, "containers.create", p.volume,
			"the session's workspace volume %s does not exist: open the session (run a command in it) first", p.volume)
	}
	if err != nil {
		return b.svc.wrap(ctx, "containers.create", p.volume, err)
	}
	owner := &Workspace{session: req.Owner.Session, user: req.Owner.User, volume: p.volume}
	if err := owner.checkVolumeLabels(v.Labels); err != nil {
		return err
	}
	s.Volumes = append(s.Volumes, &specgen.NamedVolume{Name: p.volume, Dest: ContainerWorkspace, Options: []string{"rw", "nosuid", "nodev"}})
	return nil
}
