package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// Containers runs one containers operation for the session: the request
// is checked, passed through the policy chain (action
// containers.<operation>, and shell.exec for each command it runs in a
// container: containers_commands.go), then to the backend's Containers.
// Every face (the tool, wai containers, the Go API) goes through here.
func (s *Session) Containers(ctx context.Context, req ContainerRequest) (ContainerResponse, error) {
	resp := ContainerResponse{Operation: req.Operation}
	op := ActionContainersPrefix + req.Operation
	if !validOperation(req.Operation) {
		return resp, backend.Errorf(backend.ErrInvalid, "containers", req.Operation,
			"unknown operation %q: use one of %s", req.Operation, strings.Join(ContainerOperations, ", "))
	}
	done, err := s.begin()
	if err != nil {
		return resp, err
	}
	defer done()
	ctx = withCallAsks(ctx)
	c, err := s.containersBackend(ctx)
	if err != nil {
		return resp, err
	}
	owner := backend.ContainerOwner{User: s.spec.User, Session: s.spec.Session}
	if req.Operation == "create" || req.Operation == "restore" || req.Operation == "compose_up" {
		s.createMu.Lock()
		defer s.createMu.Unlock()
	}
	// The policies see a create as its purpose's profile resolves it.
	creq := req
	if req.Operation == "create" {
		if creq, _, err = s.resolveCreate(ctx, req, ""); err != nil {
			return resp, err
		}
	}
	if err := s.checkReach(ctx, c, owner, req); err != nil {
		return resp, err
	}
	check, err := s.containerCheck(ctx, c, owner, creq)
	if err != nil {
		return resp, err
	}
	if err := s.checkContainers(ctx, c, owner, creq, CheckRequest{Action: op, Container: &check}); err != nil {
		return resp, err
	}
	// The command itself, as the command policies judge a session's.
	if err := s.checkInContainer(ctx, ContainerCheck{Operation: req.Operation, Container: req.Container}, execCommands(req)); err != nil {
		return resp, err
	}
	if makesFor[req.Operation] {
		// What the session makes is held while the session is (wai ps,
		// rm, gc), and the backend records that holder when the workspace
		// opens: without a shell command or a workspace mount first, it
		// would be unheld, and wai gc would take it from the live agent.
		if _, _, err := s.workspace(ctx); err != nil {
			return resp, err
		}
	}
	start := time.Now()
	resp, err = s.containerOp(ctx, c, owner, req)
	resp.Operation = req.Operation
	attrs := []slog.Attr{slog.String("session", s.spec.Session), slog.String("operation", req.Operation),
		slog.String("container", firstNonEmpty(req.Container, req.Name)), slog.Duration("duration", time.Since(start))}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	s.k.log.LogAttrs(ctx, slog.LevelInfo, "containers."+req.Operation, attrs...)
	return resp, err
}

// makesFor are the operations that make something of the session's own
// (a container, a network, a snapshot).
var makesFor = map[string]bool{"create": true, "restore": true, "compose_up": true, "create_network": true, "snapshot": true}

func validOperation(op string) bool {
	for _, o := range ContainerOperations {
		if o == op {
			return true
		}
	}
	return false
}

// containersBackend is the session's backend when it manages containers.
// An unsandboxed fallback never does: the session would believe it runs
// on the backend it asked for.
func (s *Session) containersBackend(ctx context.Context) (backend.Containers, error) {
	r, err := s.k.resolve(ctx)
	if err != nil {
		return nil, err
	}
	c, ok := r.b.(backend.Containers)
	if !ok || r.info.Fallback {
		return nil, backend.Errorf(backend.ErrUnavailable, "containers", "",
			"the session's backend (%s) does not manage containers: use backend = \"podman\" (`wai preflight` checks it)", r.info.Backend)
	}
	return c, nil
}

// containerCheck builds what the policies see; create also counts the
// session's containers for max_containers_per_session.
func (s *Session) containerCheck(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, req ContainerRequest) (ContainerCheck, error) {
	chk := ContainerCheck{Operation: req.Operation, Container: firstNonEmpty(req.Container, req.Name), Image: req.Image,
		Network: req.Network, ForwardGit: req.ForwardGit, ForwardGh: req.ForwardGh, ForwardSSH: req.ForwardSSH,
		GPU: req.GPU, Persistent: req.Persistent, Snapshot: req.Snapshot, Egress: req.Egress, Project: req.Project, Service: req.Service}
	for _, m := range req.Mounts {
		chk.MountPaths = append(chk.MountPaths, m.HostPath)
	}
	chk.RepoURL = req.RepoURL
	chk.DockerfileBuild = req.Operation == "create" && buildsDockerfile(c, req)
	if p := localRepoPath(req.RepoURL); p != "" {
		chk.MountPaths = append(chk.MountPaths, p)
	}
	if req.Operation != "create" && req.Operation != "restore" {
		return chk, nil
	}
	pass, err := parsePassthrough(req.EnvPassthrough)
	if err != nil {
		return chk, err
	}
	chk.EnvPassthrough = pass.Mode
	if pass.Mode == "" {
		chk.EnvPassthrough = "list"
	}
	ls, err := c.ListContainers(ctx, owner)
	if err != nil {
		return chk, err
	}
	chk.Count = len(ls)
	if d := s.requestDotfiles(req); d != nil && !d.Skip && d.Repo != "" {
		chk.DotfilesRepo = maskRepo(d.Repo)
	}
	restoreImage(ctx, c, owner, req, &chk)
	return chk, nil
}

// parsePassthrough reads env_passthrough: a mode string or a list.
func parsePassthrough(raw json.RawMessage) (backend.EnvPassthrough, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return backend.EnvPassthrough{Mode: backend.EnvPassAuto}, nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		switch mode {
		case backend.EnvPassAuto, backend.EnvPassAll, backend.EnvPassNone:
			return backend.EnvPassthrough{Mode: mode}, nil
		}
		return backend.EnvPassthrough{}, backend.Errorf(backend.ErrInvalid, "containers.create", "", "env_passthrough %q: use auto, all, none or a list of variable names", mode)
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		return backend.EnvPassthrough{}, backend.Errorf(backend.ErrInvalid, "containers.create", "", "env_passthrough: use auto, all, none or a list of variable names")
	}
	return backend.EnvPassthrough{Names: append([]string{}, names...)}, nil
}

// containerOp runs an allowed operation on the backend: the session's
// own (sessionOp), or one on the container req names (namedOp).
func (s *Session) containerOp(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, req ContainerRequest) (ContainerResponse, error) {
	if snapshotOps[req.Operation] {
		return s.snapshotOp(ctx, c, owner, req)
	}
	if resp, ok, err := s.sessionOp(ctx, c, owner, req); ok {
		return resp, err
	}
	if req.Container == "" {
		return ContainerResponse{}, backend.Errorf(backend.ErrInvalid, "containers."+req.Operation, "", "give container: the name create returned (list shows them)")
	}
	return s.namedOp(ctx, c, backend.ContainerRef{Owner: owner, Name: req.Container}, req)
}

// sessionOp runs the operations that need no container name (preflight,
// create, list, networks, compose); ok is false for the others.
func (s *Session) sessionOp(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, req ContainerRequest) (resp ContainerResponse, ok bool, err error) {
	switch req.Operation {
	case "preflight":
		pf, err := c.ContainersPreflight(ctx)
		resp.Preflight = &pf
		if err == nil && pf.Ready {
			s.containersReady.Store(true)
		}
		return resp, true, err
	case "create":
		resp, err = s.createWithProfile(ctx, c, owner, req)
	case "list":
		resp, err = s.listContainers(ctx, c, owner, req.AllSessions)
	case "destroy_all":
		resp.Containers, err = c.DestroyContainers(ctx, owner, false)
	case "create_network", "destroy_network", "list_networks":
		resp, err = s.networkOp(ctx, c, owner, req)
	case "compose_up", "compose_down", "compose_status":
		resp, err = s.composeOp(ctx, c, owner, req)
	default:
		return resp, false, nil
	}
	return resp, true, err
}

// namedOp runs an operation on the container ref names.
func (s *Session) namedOp(ctx context.Context, c backend.Containers, ref backend.ContainerRef, req ContainerRequest) (ContainerResponse, error) {
	var resp ContainerResponse
	var err error
	switch req.Operation {
	case "exec":
		var res backend.ExecResult
		var fit execFit
		res, fit, err = s.containerExecFit(ctx, c, ref, req.Command, req.Workdir, req.Timeout)
		wire := toContainerExec(res)
		wire.TimeoutMS, wire.TimeoutNote = fit.run.Milliseconds(), fit.note
		resp.Exec = &wire
	case "exec_interactive_hint":
		var h backend.InteractiveHint
		h, err = c.InteractiveHint(ctx, ref)
		resp.Hint = &h
	case "status":
		return s.containerStatus(ctx, c, ref, req.HealthCheck)
	case "destroy":
		var info backend.ContainerInfo
		info, err = c.DestroyContainer(ctx, ref, req.Force)
		resp.Container = &info
	case "start", "stop":
		var info backend.ContainerInfo
		if req.Operation == "start" {
			info, err = c.StartContainer(ctx, ref)
		} else {
			info, err = c.StopContainer(ctx, ref, req.Force)
		}
		resp.Container = &info
	case "copy_in", "copy_out":
		resp.Copy, err = s.copyOp(ctx, c, ref, req)
	case "exec_background", "exec_poll", "exec_cancel":
		resp.Job, err = s.containerJob(ctx, c, ref, req)
	}
	return resp, err
}

// destroyContainers ends the session's non-persistent containers; Close
// calls it. Errors are logged: the session closes all the same.
func (s *Session) destroyContainers(ctx context.Context) {
	if !s.containersUsed.Load() {
		return
	}
	// Not resolve: a closing kernel refuses it, and closes its sessions
	// before the backends, so the chosen backend still serves here.
	s.k.mu.Lock()
	r := s.k.chosen
	s.k.mu.Unlock()
	if r == nil {
		return
	}
	c, ok := r.b.(backend.Containers)
	if !ok {
		return
	}
	gone, err := c.DestroyContainers(ctx, backend.ContainerOwner{User: s.spec.User, Session: s.spec.Session}, true)
	sweptEvents(ctx, s, "container", "", gone, func(g backend.ContainerInfo) string { return g.Name }, err)
	s.destroyNetworks(ctx, c)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func hostEnviron() map[string]string { return backend.EnvMap(os.Environ()) }
