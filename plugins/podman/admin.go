//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
)

// List returns the containers wai manages on the service cfg names (found
// by label, so whichever process or config created them), with their
// session, age and idle time, sorted by name.
func List(ctx context.Context, cfg Config) ([]Container, error) {
	svc := newService(cfg.URL, cfg.Identity)
	defer svc.drop()
	ls, err := list(ctx, svc, time.Now())
	out := make([]Container, len(ls))
	for i, l := range ls {
		out[i] = l.Container
	}
	return out, err
}

// listed is a container and the state file its label names.
type listed struct {
	Container
	statePath string
}

func list(ctx context.Context, svc *service, now time.Time) ([]listed, error) {
	cctx, err := svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	l, err := containers.List(cctx, new(containers.ListOptions).WithAll(true).
		WithFilters(map[string][]string{"label": {labelManaged + "=true"}}))
	if err != nil {
		return nil, svc.wrap(ctx, "ps", "", err)
	}
	out := make([]listed, 0, len(l))
	for _, c := range l {
		ct := listed{Container: Container{ID: c.ID, Session: c.Labels[labelSession], Image: c.Image, State: c.State,
			Created: c.Created, Keep: c.Labels[labelKeep] == "true", Workspace: c.Labels[labelWorkspace]}}
		if len(c.Names) > 0 {
			ct.Name = c.Names[0]
		}
		if c.StartedAt > 0 {
			ct.StartedAt = time.Unix(c.StartedAt, 0)
		}
		ct.statePath = c.Labels[labelState]
		if p := ct.statePath; p != "" {
			if s, used, err := readState(p); err == nil {
				ct.LastUsed, ct.Idle = used, now.Sub(used)
				ct.Owner, ct.OwnerAlive = s.Owner.String(), s.Owner.alive()
				ct.Keep = ct.Keep || s.Keep
			}
		}
		out = append(out, ct)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// GC removes what crashed or abandoned sessions left behind: managed
// containers and workspace directories (with their state files) whose
// session no live wai process holds. A kept session is left alone until it
// has been idle for idle_timeout; all removes kept sessions too. A session
// a running process holds is never removed.
func GC(ctx context.Context, cfg Config, all bool) (GCReport, error) {
	svc := newService(cfg.URL, cfg.Identity)
	defer svc.drop()
	return gc(ctx, svc, cfg, all, time.Now())
}

func gc(ctx context.Context, svc *service, cfg Config, all bool, now time.Time) (GCReport, error) {
	var rep GCReport
	cs, err := list(ctx, svc, now)
	if err != nil {
		return rep, err
	}
	idle := time.Duration(cfg.IdleTimeout)
	seen := map[string]bool{}
	cctx, err := svc.ctx(ctx)
	if err != nil {
		return rep, err
	}
	for _, c := range cs {
		seen[c.Workspace] = true
		stPath := c.statePath
		var st *sessionState
		var used time.Time
		if s, u, err := readState(stPath); err == nil {
			st, used = &s, u
		}
		item := GCItem{Kind: "container", Name: c.Name, Session: c.Session}
		remove, why := verdict(st, used, all, idle, now)
		item.Reason = why
		if !remove {
			rep.Kept = append(rep.Kept, item)
			continue
		}
		if _, err := containers.Remove(cctx, c.ID, new(containers.RemoveOptions).WithForce(true).WithTimeout(0).WithIgnore(true)); err != nil && !notFound(err) {
			rep.Errors = append(rep.Errors, svc.wrap(ctx, "gc", c.Name, err))
			continue
		}
		rep.Removed = append(rep.Removed, item)
		if err := removeWorkspace(c.Workspace, c.Session, stPath); err != nil {
			rep.Errors = append(rep.Errors, err)
		} else if c.Workspace != "" {
			rep.Removed = append(rep.Removed, GCItem{Kind: "workspace", Name: c.Workspace, Session: c.Session, Reason: why})
		}
	}
	gcDirs(cfg, all, now, seen, &rep)
	return rep, nil
}

// gcDirs removes workspace directories (and stray state files) under
// cfg.WorkspaceDir that no container uses and no live process holds.
func gcDirs(cfg Config, all bool, now time.Time, seen map[string]bool, rep *GCReport) {
	names := map[string]bool{}
	if ents, err := os.ReadDir(cfg.WorkspaceDir); err == nil {
		for _, e := range ents {
			if e.IsDir() && validSession(e.Name()) {
				names[e.Name()] = true
			}
		}
	}
	if ents, err := os.ReadDir(filepath.Join(cfg.WorkspaceDir, stateDirName)); err == nil {
		for _, e := range ents {
			if n, ok := strings.CutSuffix(e.Name(), ".json"); ok && validSession(n) {
				names[n] = true
			}
		}
	}
	for n := range names {
		dir := filepath.Join(cfg.WorkspaceDir, n)
		if seen[dir] {
			continue
		}
		stPath := statePath(cfg.WorkspaceDir, n)
		var st *sessionState
		used := time.Time{}
		if s, u, err := readState(stPath); err == nil {
			st, used = &s, u
		} else if fi, err := os.Stat(dir); err == nil {
			used = fi.ModTime()
		}
		item := GCItem{Kind: "workspace", Name: dir, Session: n}
		remove, why := verdict(st, used, all, time.Duration(cfg.IdleTimeout), now)
		item.Reason = why
		if !remove {
			rep.Kept = append(rep.Kept, item)
			continue
		}
		if err := removeWorkspace(dir, n, stPath); err != nil {
			rep.Errors = append(rep.Errors, err)
			continue
		}
		rep.Removed = append(rep.Removed, item)
	}
}

// Interface guards
var _ backend.Backend = (*Backend)(nil)
