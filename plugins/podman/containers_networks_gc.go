//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"

	"github.com/wai-dev/wai/host/backend"
)

// gcNetworks removes managed networks whose session is over (as
// gcContainers decides for containers) once no container uses them; it
// runs after gcContainers so a session's network goes with its
// containers. Persistent ones stay unless opts.All.
func (b *Backend) gcNetworks(ctx context.Context, opts backend.GCOptions, rep *backend.GCReport) {
	const op = "containers.gc"
	l, err := b.managedNetworks(ctx, op, backend.ContainerOwner{}, true)
	if err != nil {
		rep.Errors = append(rep.Errors, err)
		return
	}
	for _, n := range l {
		if !opts.Matches(n.Session) {
			continue
		}
		keep := b.gcKeep(opts, n.Session, n.Persistent, "persistent: removed by wai gc --all")
		if keep == "" && len(n.Containers) > 0 {
			keep = "containers still use it"
		}
		item := backend.GCItem{Kind: "managed-network", Name: n.Name, Session: n.Session}
		gcOne(ctx, rep, item, keep, "its session is over", func(ctx context.Context) error { return b.removeNetwork(ctx, op, n) })
	}
}

// sessionLive reports whether a live process holds the session.
func (b *Backend) sessionLive(session string) bool { return b.SessionHolder(session) != "" }

// SessionHolder describes the live process holding the session, from its
// state file; "" when none does. A state file that cannot be read names
// no holder, as RemoveSession and gc's managed sweep read it.
func (b *Backend) SessionHolder(session string) string {
	p, err := b.cfg.pathsOf(session)
	if err != nil {
		return ""
	}
	st, _, err := readState(p.state)
	if err != nil || !st.Owner.Alive() {
		return ""
	}
	return st.Owner.String()
}

// Interface guards
var _ backend.SessionHolderReporter = (*Backend)(nil)
