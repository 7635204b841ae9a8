//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/bindings/volumes"

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
		if c.Labels[labelKind] != "" {
			// Not a session's: an agent-managed container, or the files
			// volume's fill container, which another process is using
			// (gc took it for a session without a state file, and removed
			// it in the middle of that process's fill).
			continue
		}
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
				ct.Owner, ct.OwnerAlive = s.Owner.String(), s.Owner.Alive()
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
	return gcIn(ctx, svc, cfg, gcScope{all: all}, now)
}

// gcScope narrows a sweep: all takes kept sessions too; match, when not
// nil, limits it to the sessions it accepts; ours limits it to containers
// whose workspace lies in cfg's workspace directory (this configuration's,
// not every wai's on the service); by names the sweeper for tombstones
// (removedBy: "" is wai gc).
type gcScope struct {
	all   bool
	match func(session string) bool
	ours  bool
	by    string
}

func (sc gcScope) takes(cfg Config, session, workspace string) bool {
	if p, err := cfg.pathsOf(session); sc.ours && (err != nil || workspace != p.workspaceRef()) {
		return false
	}
	return sc.match == nil || sc.match(session)
}

func gcIn(ctx context.Context, svc *service, cfg Config, scope gcScope, now time.Time) (GCReport, error) {
	all := scope.all
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
		if !scope.takes(cfg, c.Session, c.Workspace) {
			continue
		}
		stPath := c.statePath
		st, used, stErr := gcState(stPath)
		item := GCItem{Kind: "container", Name: c.Name, Session: c.Session}
		remove, why := verdict(st, used, all, idle, now)
		if stErr != nil && !all {
			remove, why = unreadableState(stErr)
		}
		if remove && !all && st != nil && st.Keep && c.State == "running" {
			// A running background job counts as use of a kept session.
			switch n, err := runningJobs(ctx, svc, cfg.User, c.ID); {
			case err != nil:
				// Not knowing is no licence to kill its jobs.
				remove, why = false, fmt.Sprintf("kept session whose background jobs could not be listed (%v); `wai gc --all` removes it anyway", err)
			case n > 0:
				remove, why = false, fmt.Sprintf("kept session with %d running background job(s)", n)
				touchState(stPath, now)
			}
		}
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
		if err := removeWorkspace(c.Workspace, c.Session, stPath, removedBy(scope.by), why); err != nil {
			rep.Errors = append(rep.Errors, err)
		} else if c.Workspace != "" {
			rep.Removed = append(rep.Removed, GCItem{Kind: "workspace", Name: c.Workspace, Session: c.Session, Reason: why})
		}
	}
	gcDirs(cfg, scope, now, seen, &rep)
	gcVolumes(ctx, svc, cfg, scope, now, &rep)
	return rep, nil
}

// gcDirs removes workspace directories (and stray state files) under
// cfg.WorkspaceDir that no container uses and no live process holds.
func gcDirs(cfg Config, scope gcScope, now time.Time, seen map[string]bool, rep *GCReport) {
	all := scope.all
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
		if seen[dir] || !scope.takes(cfg, n, dir) {
			continue
		}
		stPath := statePath(cfg.WorkspaceDir, n)
		st, used, stErr := gcState(stPath)
		if st == nil {
			if fi, err := os.Stat(dir); err == nil {
				used = fi.ModTime()
			}
		}
		item := GCItem{Kind: "workspace", Name: dir, Session: n}
		remove, why := verdict(st, used, all, time.Duration(cfg.IdleTimeout), now)
		if stErr != nil && !all {
			remove, why = unreadableState(stErr)
		}
		item.Reason = why
		if !remove {
			rep.Kept = append(rep.Kept, item)
			continue
		}
		if err := removeWorkspace(dir, n, stPath, removedBy(scope.by), why); err != nil {
			rep.Errors = append(rep.Errors, err)
			continue
		}
		rep.Removed = append(rep.Removed, item)
	}
}

// ListSessions lists this configuration's sessions: those with a state
// file or a workspace directory under workspace_dir, and those whose
// container runs on the service (a session whose idle container was
// removed is listed all the same: its files are kept).
func (b *Backend) ListSessions(ctx context.Context) ([]backend.SessionInfo, error) {
	cs, err := list(ctx, b.svc, time.Now())
	if err != nil {
		return nil, err
	}
	byName := map[string]*backend.SessionInfo{}
	for _, c := range cs {
		if p, err := b.cfg.pathsOf(c.Session); err != nil || c.Workspace != p.workspaceRef() {
			continue // another configuration's container
		}
		byName[c.Session] = &backend.SessionInfo{Backend: "podman", Session: c.Session, Created: c.Created,
			Container: c.Name, State: c.State, Keep: c.Keep, Workspace: c.Workspace}
	}
	for _, n := range b.sessionNames() {
		if p, err := b.cfg.pathsOf(n); err == nil && byName[n] == nil {
			byName[n] = &backend.SessionInfo{Backend: "podman", Session: n, Workspace: p.workspaceRef()}
		}
	}
	out := make([]backend.SessionInfo, 0, len(byName))
	for _, si := range byName {
		b.fillInfo(ctx, si)
		out = append(out, *si)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return out, ctx.Err()
}

// sessionNames lists the sessions with a state file or a workspace
// directory under workspace_dir.
func (b *Backend) sessionNames() []string {
	names := map[string]bool{}
	for _, root := range b.cfg.sessionRoots() {
		if ents, err := os.ReadDir(root); err == nil {
			for _, e := range ents {
				if e.IsDir() && validSession(e.Name()) {
					names[e.Name()] = true
				}
			}
		}
		if ents, err := os.ReadDir(filepath.Join(root, stateDirName)); err == nil {
			for _, e := range ents {
				if n, ok := strings.CutSuffix(e.Name(), ".json"); ok && validSession(n) {
					names[n] = true
				}
			}
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	return out
}

// fillInfo adds what the state file and the disk say of a session.
func (b *Backend) fillInfo(ctx context.Context, si *backend.SessionInfo) {
	si.Size = -1
	p, err := b.cfg.pathsOf(si.Session)
	if err != nil {
		return
	}
	if st, used, err := readState(p.state); err == nil {
		si.LastUsed = used
		si.Keep = si.Keep || st.Keep
		if !st.Created.IsZero() {
			si.Created = st.Created
		}
		if st.Owner.Alive() {
			si.Holder = st.Owner.String()
		}
	}
	if p.volume != "" {
		return // a volume's size is the service's to measure: unknown here
	}
	if n, err := backend.DiskUsage(ctx, p.dir); err == nil {
		si.Size = n
	} else if si.Created.IsZero() {
		if fi, err := os.Stat(p.dir); err == nil {
			si.Created = fi.ModTime()
		}
	}
}

// RemoveSession removes a session no live process holds: its container,
// its workspace directory and its state file.
func (b *Backend) RemoveSession(ctx context.Context, session string) (backend.SessionInfo, error) {
	if !validSession(session) {
		return backend.SessionInfo{}, backend.Errorf(backend.ErrInvalid, "rm", session, "not a session name")
	}
	p, err := b.cfg.pathsOf(session)
	if err != nil {
		return backend.SessionInfo{}, err
	}
	si := backend.SessionInfo{Backend: "podman", Session: session, Workspace: p.workspaceRef(), Container: p.name}
	stPath := p.state
	st, _, stErr := readState(stPath)
	if stErr == nil && st.Owner.Alive() {
		return si, backend.Errorf(backend.ErrPermission, "rm", session,
			"the session is in use by %s: wai never removes a session a running process holds; end it there (close the client, or stop that process) and run wai rm again", st.Owner)
	}
	_, dirErr := os.Stat(p.dir)
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return si, err
	}
	if p.volume != "" {
		if ok, err := volumes.Exists(cctx, p.volume, nil); err == nil && ok {
			dirErr = nil
		}
	}
	exists, err := containers.Exists(cctx, si.Container, nil)
	if err != nil {
		return si, b.svc.wrap(ctx, "rm", si.Container, err)
	}
	if !exists && stErr != nil && dirErr != nil {
		return si, backend.Errorf(backend.ErrNotFound, "rm", session, "no such session on the podman backend (wai ps lists them)")
	}
	b.fillInfo(ctx, &si)
	if exists {
		if err := b.remove(ctx, si.Container); err != nil {
			return si, err
		}
	}
	if p.volume != "" {
		if err := removeVolume(ctx, b.svc, p.volume, session); err != nil {
			return si, err
		}
	}
	return si, removeWorkspace(p.dir, session, stPath, removedBy("wai rm"), "wai rm was asked to remove the session")
}

// CollectGarbage sweeps this configuration's sessions as GC does, limited
// to those opts.Match accepts, and then what files volumes leave behind on
// the service (gcFiles), which belongs to no session.
func (b *Backend) CollectGarbage(ctx context.Context, opts backend.GCOptions) (backend.GCReport, error) {
	rep, err := gcIn(ctx, b.svc, b.cfg, gcScope{all: opts.All, match: opts.Match, ours: true}, time.Now())
	conv := func(items []GCItem) []backend.GCItem {
		out := make([]backend.GCItem, len(items))
		for i, it := range items {
			out[i] = backend.GCItem{Kind: it.Kind, Name: it.Name, Session: it.Session, Reason: it.Reason}
		}
		return out
	}
	out := backend.GCReport{Removed: conv(rep.Removed), Kept: conv(rep.Kept), Errors: rep.Errors}
	if err == nil {
		b.gcContainers(ctx, opts, &out)
		// After the containers: a removed one no longer holds its files.
		b.gcFiles(ctx, collectFilesScope, time.Now(), &out)
	}
	return out, err
}
