//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// gcContainers removes managed containers whose session is over: no live
// process holds the session that made them (its state file is gone or
// its owner dead). Persistent ones stay unless opts.All. Only sessions
// opts.Match accepts are considered.
func (b *Backend) gcContainers(ctx context.Context, opts backend.GCOptions, rep *backend.GCReport) {
	l, err := b.ListManagedContainers(ctx)
	if err != nil {
		rep.Errors = append(rep.Errors, err)
		return
	}
	for _, c := range l {
		if !opts.Matches(c.Session) {
			continue
		}
		keep := b.gcKeep(opts, c.Session, c.Persistent, "persistent: removed by wai rm, or wai gc --all")
		why := "its session is over"
		if c.Persistent {
			why = "persistent, and --all asked for it"
		}
		item := backend.GCItem{Kind: "managed-container", Name: c.Name, Session: c.Session}
		gcOne(ctx, rep, item, keep, why, func(ctx context.Context) error { return b.destroy(ctx, c, true) })
	}
	b.gcNetworks(ctx, opts, rep)
}

// gcKeep is why gc leaves a managed container or network of session
// alone, "" when it need not: a live process holds the session, or it is
// persistent (persistentWhy says how it goes instead) and opts.All is off.
func (b *Backend) gcKeep(opts backend.GCOptions, session string, persistent bool, persistentWhy string) string {
	switch {
	case b.sessionLive(session):
		return "its session is in use"
	case persistent && !opts.All:
		return persistentWhy
	}
	return ""
}

// gcOne records item as kept when keep gives a reason; else it removes
// it, with a minute of its own so one stuck removal does not use up the
// whole gc, and records it as removed (for why) or its error.
func gcOne(ctx context.Context, rep *backend.GCReport, item backend.GCItem, keep, why string, remove func(context.Context) error) {
	if keep != "" {
		item.Reason = keep
		rep.Kept = append(rep.Kept, item)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := remove(ctx); err != nil {
		rep.Errors = append(rep.Errors, err)
		return
	}
	item.Reason = why
	rep.Removed = append(rep.Removed, item)
}

// Interface guards
var _ backend.ManagedContainerLister = (*Backend)(nil)
