//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"strings"

	"github.com/containers/podman/v5/libpod/define"
	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
)

// ensure returns the running container, creating it (or adopting the one a
// kept session left under the same name) when there is none.
func (w *Workspace) ensure(ctx context.Context) (*ctrState, error) {
	if w.managed {
		return w.ensureManaged(ctx)
	}
	if err := w.checkDir(ctx); err != nil {
		return nil, err
	}
	if st := w.cur.Load(); st != nil {
		return st, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if st := w.cur.Load(); st != nil {
		return st, nil
	}
	if w.closed {
		return nil, backend.Errorf(backend.ErrUnavailable, "exec", "", "the workspace of session %s is closed", w.session)
	}
	b := w.b
	reason := w.deadReason
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	data, err := containers.Inspect(cctx, w.name, nil)
	switch {
	case err == nil:
		var st *ctrState
		if st, reason, err = w.adopt(ctx, data, reason); st != nil || err != nil {
			return st, err
		}
	case notFound(err):
		if reason != "" && !strings.Contains(reason, "removed") {
			reason += "; it was removed"
		}
	default:
		return nil, b.svc.wrap(ctx, "exec", w.name, err)
	}
	st, err := b.createStarted(ctx, w)
	if err != nil {
		return nil, err
	}
	w.deadReason = ""
	w.cur.Store(st)
	if reason != "" {
		b.event(ctx, "runtime.podman.recreated_after_failure", w, "container_id", short(st.id), "reason", reason)
	}
	return st, nil
}

// adopt deals with the container of the workspace's name that the
// service has (data): it is reattached when it runs as this workspace's
// and nothing marked it dead (reason is ""), else removed, with the reason
// to give for its recreation. One wai did not create, or another user's
// session's, is refused and left alone.
func (w *Workspace) adopt(ctx context.Context, data *define.InspectContainerData, reason string) (*ctrState, string, error) {
	b := w.b
	if data.Config == nil || data.Config.Labels[labelManaged] != "true" {
		return nil, reason, backend.Errorf(backend.ErrUnavailable, "exec", w.name,
			"a container named %s exists that wai did not create: remove it (`podman rm -f %s`) or change name_prefix", w.name, w.name)
	}
	if u := data.Config.Labels[labelUser]; u != w.user {
		// Another user's session whose name happens to be this one's:
		// never theirs to remove.
		return nil, reason, backend.Errorf(backend.ErrPermission, "exec", w.name,
			"the container %s belongs to a session of another user: open the session under another name", w.name)
	}
	if reason == "" && data.State != nil && data.State.Running && data.Config.Labels[labelWorkspace] == w.ref() {
		st := &ctrState{id: data.ID, started: data.State.StartedAt, env: data.Config.Env}
		if n, ok := b.oomKills(ctx, st.id); ok {
			st.oomBase.Store(int64(n))
		}
		w.cur.Store(st)
		b.event(ctx, "runtime.podman.reattached", w, "container_id", short(st.id))
		return st, reason, nil
	}
	if ws := data.Config.Labels[labelWorkspace]; reason == "" && ws != w.ref() {
		reason = "it mounted another workspace directory (" + ws + ")"
	} else if reason == "" && data.State != nil {
		reason = "found it " + data.State.Status
		if data.State.OOMKilled {
			reason += " (OOM killed)"
		}
	} else if reason == "" {
		reason = "found it in an unknown state"
	}
	return nil, reason, b.remove(ctx, data.ID)
}

// markDead drops st (if it is still the current container) so that the
// next call recreates the container.
func (w *Workspace) markDead(st *ctrState, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur.CompareAndSwap(st, nil) {
		w.deadReason = reason
	}
}

// retire removes the container st if it is still the current one: the
// idle reaper and the uptime limit use it. The workspace stays; the next
// command starts a fresh container.
func (w *Workspace) retire(ctx context.Context, st *ctrState, event, reason string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.cur.CompareAndSwap(st, nil) {
		return nil
	}
	if err := w.b.remove(ctx, st.id); err != nil {
		return err
	}
	w.b.event(ctx, event, w, "container_id", short(st.id), "reason", reason)
	return nil
}
