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
		item := backend.GCItem{Kind: "managed-container", Name: c.Name, Session: c.Session}
		live := false
		if p, err := b.cfg.pathsOf(c.Session); err == nil {
			if st, _, err := readState(p.state); err == nil && st.Owner.Alive() {
				live = true
			}
		}
		switch {
		case live:
			item.Reason = "its session is in use"
		case c.Persistent && !opts.All:
			item.Reason = "persistent: removed by wai rm, or wai gc --all"
		}
		if item.Reason != "" {
			rep.Kept = append(rep.Kept, item)
			continue
		}
		item.Reason = "its session is over"
		if c.Persistent {
			item.Reason = "persistent, and --all asked for it"
		}
		dctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := b.destroy(dctx, c, true)
		cancel()
		if err != nil {
			rep.Errors = append(rep.Errors, err)
			continue
		}
		rep.Removed = append(rep.Removed, item)
	}
	b.gcNetworks(ctx, opts, rep)
}

// Interface guards
var _ backend.ManagedContainerLister = (*Backend)(nil)
