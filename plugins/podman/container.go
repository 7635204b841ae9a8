//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/bindings/images"
	"github.com/containers/podman/v5/pkg/specgen"
	spec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/wai-dev/wai/host/backend"
)

// Labels on every container the backend creates. wai gc and wai ps find
// containers by them, so they also work for containers a crashed process
// left behind.
const (
	labelManaged   = "wai.managed"   // "true"
	labelSession   = "wai.session"   // the session name
	labelWorkspace = "wai.workspace" // host path of the workspace directory
	labelState     = "wai.state"     // host path of the session's state file
	labelKeep      = "wai.keep"      // "true" when the session was opened with Keep
	labelUser      = "wai.user"      // the session's user, "" for none
)

// spec builds the hardened container of a session.
func (b *Backend) spec(w *Workspace) (*specgen.SpecGenerator, error) {
	c := b.cfg
	name := w.name
	s := specgen.NewSpecGenerator(b.image(), false)
	s.Name = name
	s.Labels = map[string]string{
		labelManaged:   "true",
		labelSession:   w.session,
		labelUser:      w.user,
		labelWorkspace: w.ref(),
		labelState:     w.statePath,
		labelKeep:      fmt.Sprint(w.keep()),
	}
	// The init process (catatonit) is PID 1: it reaps the orphans of
	// killed commands, so zombies do not pile up against the pids limit.
	s.Init = ptr(true)
	s.Command = []string{"sleep", "infinity"}
	s.User = c.User
	s.WorkDir = ContainerWorkspace
	s.Env = c.Env
	if c.Runtime != "" {
		s.OCIRuntime = c.Runtime
	}
	if c.Network == "none" {
		s.NetNS = specgen.Namespace{NSMode: specgen.NoNetwork}
	} else {
		s.NetNS = specgen.Namespace{NSMode: specgen.NamespaceMode(c.Network)}
	}
	b.harden(s, c.memoryBytes, c.CPUs, c.PidsLimit)
	s.ReadOnlyFilesystem = ptr(true)
	s.Mounts = []spec.Mount{
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs",
			Options: []string{"rw", "nosuid", "nodev", fmt.Sprintf("size=%d", c.tmpfsBytes), "mode=1777"}},
	}
	if w.volume != "" {
		s.Volumes = []*specgen.NamedVolume{{Name: w.volume, Dest: ContainerWorkspace, Options: []string{"rw", "nosuid", "nodev"}}}
	} else {
		s.Mounts = append(s.Mounts, spec.Mount{Destination: ContainerWorkspace, Type: "bind", Source: w.dir, Options: []string{"rbind", "rw", "nosuid", "nodev"}})
	}
	if b.agentBin != "" {
		s.Mounts = append(s.Mounts, spec.Mount{Destination: agentMountPath, Type: "bind", Source: b.agentBin,
			Options: []string{"bind", "ro", "nosuid", "nodev"}})
	}
	// Podman's default profile with user namespaces denied (inside one a
	// command would get every capability back over its own namespaces):
	// createStarted sets SeccompProfilePath.
	if err := s.Validate(); err != nil {
		return nil, backend.Errorf(backend.ErrInvalid, "create", name, "the container spec is invalid: %v", err)
	}
	return s, nil
}

func ptr[T any](v T) *T { return &v }

// createStarted creates, starts and health-checks the container of w and
// returns its state. A half-made container is removed again. One that
// failed because the files volume was removed under this process is tried
// once more, with the volume found or made again.
func (b *Backend) createStarted(ctx context.Context, w *Workspace) (*ctrState, error) {
	st, err := b.createStartedOnce(ctx, w)
	if err != nil && b.forgetLostFiles(err) {
		st, err = b.createStartedOnce(ctx, w)
	}
	return st, err
}

func (b *Backend) createStartedOnce(ctx context.Context, w *Workspace) (*ctrState, error) {
	if err := b.ensureImage(ctx); err != nil {
		return nil, err
	}
	s, err := b.spec(w)
	if err != nil {
		return nil, err
	}
	// Written again when missing (cleaned away by hand, say): without it
	// the service refuses to create the container.
	if s.SeccompProfilePath, err = writeSeccompProfile(b.seccompDir); err != nil {
		return nil, err
	}
	if err := b.useFilesOnService(ctx, s); err != nil {
		return nil, err
	}
	// Create and start take about a second, more on a busy service: the
	// front end says so rather than look hung before the first command.
	defer backend.StartProgress(ctx, "starting container "+w.name)()
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	resp, err := containers.CreateWithSpec(cctx, s, nil)
	if err != nil {
		if strings.Contains(err.Error(), "image not known") {
			return nil, b.imageMissing(b.image(), fmt.Errorf("the image disappeared: %w", err))
		}
		return nil, b.svc.wrap(ctx, "create", w.name, err)
	}
	if w.hydrate {
		// A new volume workspace: host_mounts go in before anything runs.
		if err := b.hydrateVolume(ctx, w, resp.ID); err != nil {
			b.removeQuiet(resp.ID)
			return nil, err
		}
		w.hydrate = false
	}
	b.event(ctx, "runtime.podman.created", w, "container_id", short(resp.ID), "image", s.Image, "duration", time.Since(t0))
	t1 := time.Now()
	if err := containers.Start(cctx, resp.ID, nil); err != nil {
		b.removeQuiet(resp.ID)
		return nil, startFailed(b, w.name, err, ctx)
	}
	st := &ctrState{id: resp.ID, started: time.Now()}
	if data, err := containers.Inspect(cctx, resp.ID, nil); err == nil {
		if err := b.checkRuntime(w.name, data.OCIRuntime); err != nil {
			b.removeQuiet(resp.ID)
			return nil, err
		}
		if data.Config != nil {
			st.env = data.Config.Env
		}
		if !data.State.StartedAt.IsZero() {
			st.started = data.State.StartedAt
		}
	}
	// Health: the workspace must be there, or commands would run
	// somewhere else. The check runs alongside the session's first
	// command rather than before it (it is an exec of its own, about as
	// slow as the command); run waits for it before handing out a result.
	st.healthy = make(chan struct{})
	go b.checkHealth(w, st, t1)
	return st, nil
}

func (b *Backend) checkHealth(w *Workspace, st *ctrState, t1 time.Time) {
	defer close(st.healthy)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, out, err := b.execSimple(ctx, st.id, []string{"test", "-d", ContainerWorkspace}, nil)
	if err == nil && code != 0 {
		err = backend.Errorf(backend.ErrUnavailable, "start", w.name,
			"health check `test -d %s` failed (exit %d, %q): the workspace mount is missing", ContainerWorkspace, code, out)
	}
	if err != nil {
		st.healthErr = err
		w.markDead(st, "health check failed")
		b.removeQuiet(st.id)
		return
	}
	b.event(ctx, "runtime.podman.started", w, "container_id", short(st.id), "duration", time.Since(t1))
}

// checkRuntime refuses a container that runs on another OCI runtime than
// the one the config asks for. Podman 4.3 services ignore a container
// spec's runtime and use their own default, and a runtime setting that is
// silently not applied is worse than none.
func (b *Backend) checkRuntime(name, got string) error {
	want := b.cfg.Runtime
	if want == "" || got == "" || filepath.Base(got) == want {
		return nil
	}
	return backend.Errorf(backend.ErrInvalid, "start", name,
		"the Podman service ran the container with %s, not with runtime = %q from [backends.podman]: this service ignores a container's runtime. "+
			"Pin the runtime for the service instead (runtime = %q under [engine] in a containers.conf drop-in, then restart the service; "+
			"scripts/setup-podman.sh does this for runc) and drop runtime from [backends.podman]", got, want, want)
}

// startFailed explains a failed start with the fix for the known causes.
func startFailed(b *Backend, name string, err error, ctx context.Context) error {
	e := b.svc.wrap(ctx, "start", name, err)
	m := err.Error()
	switch {
	case strings.Contains(m, "rlimit"):
		return fmt.Errorf("%w (lower nofile/nproc in [backends.podman] to at most the service's hard limits, `ulimit -Hn` and `ulimit -Hu`)", e)
	case strings.Contains(m, "write child: broken pipe"):
		// conmon died before the runtime ran; the usual cause is a service
		// started from a directory that was deleted since.
		return fmt.Errorf("%w (conmon could not start the container; a Podman service whose working directory was deleted fails this way: "+
			"restart the service from / — as root, scripts/setup-podman.sh does — and see its log)", e)
	case strings.Contains(m, "cgroup"):
		// Pinned for the service, not only per container: Podman 4.3
		// services ignore a container spec's runtime and use their own.
		return fmt.Errorf("%w (crun cannot run containers on a cgroup v1 or hybrid host; runc can: as root, scripts/setup-podman.sh installs runc "+
			"and pins it for the service (runtime = \"runc\" under [engine] in a containers.conf drop-in, then restart the service), "+
			"and drop runtime = \"crun\" from [backends.podman] if it is set there)", e)
	}
	return e
}

// removeQuiet removes a container, ignoring errors: used to undo a
// half-made one, with a context of its own so it runs even when the
// caller's is cancelled.
func (b *Backend) removeQuiet(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = b.remove(ctx, id)
}

// remove force-removes a container; one that is gone already is fine.
func (b *Backend) remove(ctx context.Context, nameOrID string) error {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return err
	}
	_, err = containers.Remove(cctx, nameOrID, new(containers.RemoveOptions).WithForce(true).WithTimeout(0).WithIgnore(true))
	if err != nil && !notFound(err) {
		return b.svc.wrap(ctx, "remove", nameOrID, err)
	}
	return nil
}

func short(id string) string { return id[:min(12, len(id))] }

// puller pulls the image when it is missing, at most one pull at a time,
// and waits longer after each failed pull (pull_backoff doubling up to
// pull_backoff_max) so that sessions opening against an unreachable
// registry fail fast instead of hammering it.
type puller struct {
	mu      sync.Mutex
	image   string // the image containers run: cfg.Image, or LocalImage in its stead
	local   bool   // falling back to LocalImage is allowed
	present bool
	next    time.Time
	delay   time.Duration
	lastErr error
}

func (b *Backend) ensureImage(ctx context.Context) error {
	p := &b.pull
	p.mu.Lock()
	defer p.mu.Unlock()
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return err
	}
	if b.preferLocal(ctx, cctx) {
		return nil
	}
	ok, err := images.Exists(cctx, p.image, nil)
	if err != nil {
		return b.svc.wrap(ctx, "image", p.image, err)
	}
	if ok {
		p.present, p.delay, p.lastErr = true, 0, nil
		return nil
	}
	if wait := time.Until(p.next); p.lastErr != nil && wait > 0 {
		return b.imageMissing(p.image, fmt.Errorf("the last pull failed (%v); next attempt in %s", p.lastErr, wait.Round(100*time.Millisecond)))
	}
	t0 := time.Now()
	done := backend.StartProgress(ctx, "pulling image "+p.image)
	_, err = images.Pull(cctx, p.image, new(images.PullOptions).WithQuiet(true))
	done()
	if err == nil {
		p.present, p.delay, p.lastErr = true, 0, nil
		b.log.LogAttrs(ctx, slog.LevelInfo, "runtime.podman.pulled", attrs("image", p.image, "duration", time.Since(t0))...)
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("pull %s: %w", p.image, ctx.Err())
	}
	if p.delay == 0 {
		p.delay = time.Duration(b.cfg.PullBackoff)
	} else {
		p.delay = min(2*p.delay, time.Duration(b.cfg.PullBackoffMax))
	}
	p.next, p.lastErr = time.Now().Add(p.delay), err
	return b.imageMissing(p.image, fmt.Errorf("pulling it failed: %w; next attempt in %s", err, p.delay))
}

// preferLocal switches to LocalImage when no image was configured and it
// is present: the one scripts/setup-podman.sh builds (full Python with
// pytest, git and the usual tools) is what the user set up, and more
// useful than the registry's python image. It reports whether it did;
// b.pull.mu must be held.
func (b *Backend) preferLocal(ctx, cctx context.Context) bool {
	p := &b.pull
	if !p.local {
		return false
	}
	if ok, err := images.Exists(cctx, LocalImage, nil); err != nil || !ok {
		return false
	}
	b.log.LogAttrs(ctx, slog.LevelInfo, "runtime.podman.image_local",
		slog.String("image", LocalImage), slog.String("instead_of", p.image))
	p.image, p.local = LocalImage, false
	p.present, p.delay, p.lastErr = true, 0, nil
	return true
}

// containersImage is the image a managed container without one runs:
// containers.image, else the image a session would get. A create or the
// containers preflight may be a process's first act, before any session
// command made ensureImage prefer LocalImage, so it makes that choice
// itself (nothing is pulled: managed containers never pull).
func (b *Backend) containersImage(ctx context.Context) string {
	if b.cfg.Containers.Image != "" {
		return b.cfg.Containers.Image
	}
	b.pull.mu.Lock()
	defer b.pull.mu.Unlock()
	if cctx, err := b.svc.ctx(ctx); err == nil {
		b.preferLocal(ctx, cctx)
	}
	return b.pull.image
}

// image is the image new containers run.
func (b *Backend) image() string {
	b.pull.mu.Lock()
	defer b.pull.mu.Unlock()
	return b.pull.image
}

func (b *Backend) imageMissing(image string, err error) error {
	return &backend.Error{Kind: backend.ErrUnavailable, Op: "image", Path: image,
		Msg: "the image is not present and cannot be pulled. Build or load it where the service runs: " +
			"as root, scripts/setup-podman.sh builds localhost/wai-python:bookworm without a registry " +
			"(then set image = \"localhost/wai-python:bookworm\" in [backends.podman]); " +
			"or `podman load -i IMAGE.tar`, or `podman pull " + image + "` where a registry is reachable",
		Err: err}
}
