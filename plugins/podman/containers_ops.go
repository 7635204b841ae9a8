//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/containers/podman/v5/libpod/define"
	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/wai-dev/wai/host/backend"
)

// lookup inspects ref's container and checks that it is a managed
// container of ref's user: anything else is ErrNotFound, so another
// user's containers cannot even be probed for.
func (b *Backend) lookup(ctx context.Context, op string, ref backend.ContainerRef) (*define.InspectContainerData, error) {
	if !containerNameRE.MatchString(ref.Name) {
		return nil, backend.Errorf(backend.ErrInvalid, op, ref.Name, "give the name of a container (the list operation shows them)")
	}
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	data, err := containers.Inspect(cctx, ref.Name, nil)
	if err == nil && data.Config != nil && data.Config.Labels[labelKind] == kindContainer && data.Config.Labels[labelHome] == b.cfg.fixedDir() &&
		data.Config.Labels[labelManaged] == "true" && data.Config.Labels[labelUser] == ref.Owner.User {
		return data, nil
	}
	if err != nil && !notFound(err) {
		return nil, b.svc.wrap(ctx, op, ref.Name, err)
	}
	return nil, backend.Errorf(backend.ErrNotFound, op, ref.Name, "no such managed container (the list operation shows yours)")
}

// ListContainers lists the owner's managed containers, found by label.
func (b *Backend) ListContainers(ctx context.Context, owner backend.ContainerOwner) ([]backend.ContainerInfo, error) {
	return b.listContainers(ctx, owner, false)
}

// ListManagedContainers lists every user's managed containers (wai ps).
func (b *Backend) ListManagedContainers(ctx context.Context) ([]backend.ContainerInfo, error) {
	return b.listContainers(ctx, backend.ContainerOwner{}, true)
}

func (b *Backend) listContainers(ctx context.Context, owner backend.ContainerOwner, all bool) ([]backend.ContainerInfo, error) {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	l, err := containers.List(cctx, new(containers.ListOptions).WithAll(true).
		WithFilters(map[string][]string{"label": {labelManaged + "=true", labelKind + "=" + kindContainer, labelHome + "=" + b.cfg.fixedDir()}}))
	if err != nil {
		return nil, b.svc.wrap(ctx, "containers.list", "", err)
	}
	out := []backend.ContainerInfo{}
	for _, c := range l {
		lb := c.Labels
		if !all && (lb[labelUser] != owner.User || owner.Session != "" && lb[labelSession] != owner.Session) || len(c.Names) == 0 {
			continue
		}
		info := infoFromLabels(c.Names[0], c.ID, c.Image, lb)
		info.State, info.Running = c.State, c.State == "running"
		b.mergeMeta(&info)
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func infoFromLabels(name, id, image string, lb map[string]string) backend.ContainerInfo {
	info := backend.ContainerInfo{Name: name, ID: id, Image: image, Purpose: lb[labelPurpose], Session: lb[labelSession],
		User: lb[labelUser], Persistent: lb[labelPersistent] == "true", Network: lb[labelNetwork], Project: lb[labelProject], Service: lb[labelService]}
	info.Created, _ = time.Parse(time.RFC3339, lb[labelCreated])
	if k := lb[labelEnvKeys]; k != "" {
		info.EnvKeys = strings.Split(k, ",")
	}
	return info
}

// mergeMeta adds what only the metadata knows (mounts, ports as asked,
// provisioning); the labels stay the truth for the rest.
func (b *Backend) mergeMeta(info *backend.ContainerInfo) {
	if m, ok := b.loadMeta(info.Name); ok && m.ID == info.ID {
		info.Mounts, info.Ports, info.Provisioning = m.Mounts, m.Ports, m.Provisioning
	}
}

// ContainerStatus describes one container, probed with an exec when
// healthCheck asks and it runs.
func (b *Backend) ContainerStatus(ctx context.Context, ref backend.ContainerRef, healthCheck bool) (backend.ContainerInfo, error) {
	data, err := b.lookup(ctx, "containers.status", ref)
	if err != nil {
		return backend.ContainerInfo{}, err
	}
	info := b.describe(data)
	if info.Running && healthCheck {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		code, _, err := b.execSimple(pctx, data.ID, []string{"true"}, nil)
		cancel()
		switch {
		case err != nil:
			info.Health = "unhealthy: " + err.Error()
		case code != 0:
			info.Health = fmt.Sprintf("unhealthy: a probe exited %d", code)
		default:
			info.Health = "healthy"
		}
	}
	return info, nil
}

// DestroyContainer stops and removes one container and its metadata.
func (b *Backend) DestroyContainer(ctx context.Context, ref backend.ContainerRef, force bool) (backend.ContainerInfo, error) {
	data, err := b.lookup(ctx, "containers.destroy", ref)
	if err != nil {
		return backend.ContainerInfo{}, err
	}
	info := infoFromLabels(data.Name, data.ID, data.ImageName, data.Config.Labels)
	return info, b.destroy(ctx, info, force)
}

func (b *Backend) destroy(ctx context.Context, info backend.ContainerInfo, force bool) error {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return err
	}
	// A graceful stop gives a service in it the chance to shut down;
	// force (and a stop that failed) removes at once.
	if !force {
		_ = containers.Stop(cctx, info.ID, new(containers.StopOptions).WithTimeout(10).WithIgnore(true))
	}
	if err := b.remove(ctx, info.ID); err != nil {
		return err
	}
	b.removeMeta(info.Name)
	b.log.InfoContext(ctx, "runtime.podman.container_destroyed", "container", info.Name, "session", info.Session, "force", force)
	return nil
}

// DestroyContainers destroys the owner's containers (keepPersistent: only
// the non-persistent ones).
func (b *Backend) DestroyContainers(ctx context.Context, owner backend.ContainerOwner, keepPersistent bool) ([]backend.ContainerInfo, error) {
	l, err := b.ListContainers(ctx, owner)
	if err != nil {
		return nil, err
	}
	return removeEach(l, keepPersistent, func(c backend.ContainerInfo) bool { return c.Persistent },
		func(c backend.ContainerInfo) error { return b.destroy(ctx, c, true) })
}

// removeEach removes every item of l (with keepPersistent, every one not
// persistent), going on past failures, so a session's cleanup removes
// all it can: it returns what went and every failure joined.
func removeEach[T any](l []T, keepPersistent bool, persistent func(T) bool, remove func(T) error) ([]T, error) {
	var done []T
	var errs []error
	for _, x := range l {
		if keepPersistent && persistent(x) {
			continue
		}
		if err := remove(x); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, x)
	}
	return done, errors.Join(errs...)
}

// ExecContainer runs a command in a managed container with the session
// exec's machinery (result shape, output caps, tree-kill on timeout).
func (b *Backend) ExecContainer(ctx context.Context, ref backend.ContainerRef, req backend.ExecRequest) (backend.ExecResult, error) {
	const op = "containers.exec"
	lim := b.limits
	lim.DefaultTimeout = defaultExecTimeout
	lim.MaxTimeout = max(lim.MaxTimeout, time.Duration(b.cfg.Containers.MaxExecTimeout))
	timeout, err := lim.CheckExec(req)
	if err != nil {
		return backend.ExecResult{}, err
	}
	if err := checkReserved(op, req.Env); err != nil {
		return backend.ExecResult{}, err
	}
	if req.Cwd != "" && !strings.HasPrefix(req.Cwd, "/") {
		return backend.ExecResult{}, backend.Errorf(backend.ErrInvalid, op, req.Cwd, "cwd is an absolute container path")
	}
	data, err := b.lookup(ctx, op, ref)
	if err != nil {
		return backend.ExecResult{}, err
	}
	w := b.managedWorkspace(ref, data)
	r := execRun{op: op, argv: req.Command(), shown: req.Command(), env: req.Env, replace: req.EnvMode == backend.EnvReplace,
		cwd: req.Cwd, timeout: timeout, discard: req.DiscardOutput}
	if req.Stdin != "" {
		r.stdin = &req.Stdin
	}
	return w.run(ctx, r)
}

// managedWorkspace is the exec machinery's view of a managed container: a
// workspace that never creates or recreates its container.
func (b *Backend) managedWorkspace(ref backend.ContainerRef, data *define.InspectContainerData) *Workspace {
	w := &Workspace{b: b, session: ref.Owner.Session, user: ref.Owner.User, name: data.Name,
		managed: true, closing: make(chan struct{})}
	if data.State != nil && data.State.Running {
		// Inspected a moment ago: no second inspect before the exec. A
		// container that stopped since fails the exec's create, and
		// markDead makes the retry inspect it again.
		st := &ctrState{id: data.ID, started: data.State.StartedAt}
		if data.Config != nil {
			st.env = data.Config.Env
		}
		w.cur.Store(st)
	}
	return w
}

// ensureManaged returns the managed container's state when it runs; a
// stopped one is a clear error, never restarted behind the caller's back.
func (w *Workspace) ensureManaged(ctx context.Context) (*ctrState, error) {
	if st := w.cur.Load(); st != nil {
		return st, nil
	}
	cctx, err := w.b.svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	data, err := containers.Inspect(cctx, w.name, nil)
	if notFound(err) {
		return nil, backend.Errorf(backend.ErrNotFound, "containers.exec", w.name, "the container is gone")
	}
	if err != nil {
		return nil, w.b.svc.wrap(ctx, "containers.exec", w.name, err)
	}
	if data.State == nil || !data.State.Running {
		state := "unknown"
		if data.State != nil {
			state = data.State.Status
		}
		// Destroying it would lose its files: start keeps them.
		return nil, backend.Errorf(backend.ErrUnavailable, "containers.exec", w.name,
			"the container is not running (state %s): start it with operation start (its files are kept), then run the command again", state)
	}
	st := &ctrState{id: data.ID, started: data.State.StartedAt}
	if data.Config != nil {
		st.env = data.Config.Env
	}
	w.cur.Store(st)
	return st, nil
}

// InteractiveHint names the command a person runs for a shell in the
// container: bash, else zsh, else sh, whichever the image has.
func (b *Backend) InteractiveHint(ctx context.Context, ref backend.ContainerRef) (backend.InteractiveHint, error) {
	data, err := b.lookup(ctx, "containers.exec_interactive_hint", ref)
	if err != nil {
		return backend.InteractiveHint{}, err
	}
	if data.State == nil || !data.State.Running {
		return backend.InteractiveHint{}, backend.Errorf(backend.ErrUnavailable, "containers.exec_interactive_hint", ref.Name, "the container is not running: start it with operation start")
	}
	shell := "sh"
	for _, sh := range []string{"bash", "zsh"} {
		code, _, err := b.execSimple(ctx, data.ID, []string{"/bin/sh", "-c", "command -v " + sh}, nil)
		if err != nil {
			return backend.InteractiveHint{}, err
		}
		if code == 0 {
			shell = sh
			break
		}
	}
	return backend.InteractiveHint{Container: data.Name, Shell: shell, Command: b.podmanCLI() + " exec -it " + data.Name + " " + shell}, nil
}

// podmanCLI is how a person's podman reaches this backend's service: the
// plain command when it is the CLI's own default, else --url (and
// --identity for ssh).
func (b *Backend) podmanCLI() string {
	if b.cfg.URL == DefaultURL() && !strings.HasPrefix(b.cfg.URL, "ssh:") {
		return "podman"
	}
	cmd := "podman --url " + shellQuote(b.cfg.URL)
	if b.cfg.Identity != "" {
		cmd += " --identity " + shellQuote(b.cfg.Identity)
	}
	return cmd
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !slices.Contains([]rune("+-./:@_=,"), r) && !isAlnum(r) }) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
