package host

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// maxComposeFile bounds a compose file: a few services fit in kilobytes.
const maxComposeFile = 256 << 10

// ComposeStatus is a compose project: its network and its services'
// containers.
type ComposeStatus struct {
	Project  string           `json:"project"`
	File     string           `json:"file,omitempty"`
	Network  string           `json:"network,omitempty"`
	Services []ComposeService `json:"services"`
}

// ComposeService is one service's container.
type ComposeService struct {
	Service   string `json:"service"`
	Container string `json:"container"`
	Image     string `json:"image"`
	State     string `json:"state"`
	Running   bool   `json:"running"`
}

// composeOp runs compose_up, compose_down and compose_status.
func (s *Session) composeOp(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, req ContainerRequest) (ContainerResponse, error) {
	resp := ContainerResponse{}
	n, err := networksOf(c, req.Operation)
	if err != nil {
		return resp, err
	}
	if req.Operation == "compose_up" {
		return s.composeUp(ctx, c, n, owner, req)
	}
	if !projectRE.MatchString(req.Project) {
		return resp, backend.Errorf(backend.ErrInvalid, "containers."+req.Operation, req.Project, "give project: the name compose_up returned")
	}
	st, err := composeState(ctx, c, n, owner, req.Project)
	resp.Compose = &st
	if err != nil || req.Operation == "compose_status" {
		return resp, err
	}
	return resp, composeDown(ctx, c, n, owner, st, req.Force)
}

// composeState finds a project's containers and network by label, among
// every session's of the user: a persistent project (wai containers
// compose up) outlives the session that started it, as a container does.
func composeState(ctx context.Context, c backend.Containers, n backend.ContainerNetworks, owner backend.ContainerOwner, project string) (ComposeStatus, error) {
	st := ComposeStatus{Project: project, Services: []ComposeService{}}
	owner.Session = ""
	ls, err := c.ListContainers(ctx, owner)
	if err != nil {
		return st, err
	}
	for _, ci := range ls {
		if ci.Project == project {
			st.Services = append(st.Services, ComposeService{Service: ci.Service, Container: ci.Name, Image: ci.Image, State: ci.State, Running: ci.Running})
		}
	}
	nets, err := n.ListNetworks(ctx, owner)
	if err != nil {
		return st, err
	}
	for _, ni := range nets {
		if ni.Project == project {
			st.Network = ni.Name
		}
	}
	if st.Network == "" && len(st.Services) == 0 {
		return st, backend.Errorf(backend.ErrNotFound, "containers.compose", project, "no compose project of that name (compose_up starts one)")
	}
	return st, nil
}

// composeDown destroys a project's containers, then its network.
func composeDown(ctx context.Context, c backend.Containers, n backend.ContainerNetworks, owner backend.ContainerOwner, st ComposeStatus, force bool) error {
	var errs []error
	for _, svc := range st.Services {
		if _, err := c.DestroyContainer(ctx, backend.ContainerRef{Owner: owner, Name: svc.Container}, force); err != nil {
			errs = append(errs, err)
		}
	}
	if st.Network != "" && len(errs) == 0 {
		if _, err := n.DestroyNetwork(ctx, backend.ContainerRef{Owner: owner, Name: st.Network}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// composeUp reads and checks the whole file first, then creates the
// project's network and one managed container per service through the
// create path: the policy chain (action containers.create) and every
// backend rule apply to each service. A failure undoes what was made.
func (s *Session) composeUp(ctx context.Context, c backend.Containers, n backend.ContainerNetworks, owner backend.ContainerOwner, req ContainerRequest) (ContainerResponse, error) {
	const op = "containers.compose_up"
	resp := ContainerResponse{}
	if req.File == "" {
		return resp, backend.Errorf(backend.ErrInvalid, op, "", "give file: the compose file, in the workspace or absolute under allowed_host_roots")
	}
	if !strings.HasPrefix(req.File, "/") {
		if _, _, err := s.workspace(ctx); err != nil {
			return resp, err
		}
	}
	data, real, err := n.ReadHostFile(ctx, owner, req.File, maxComposeFile)
	if err != nil {
		return resp, err
	}
	name, svcs, err := parseCompose(data)
	if err != nil {
		return resp, err
	}
	project := firstNonEmpty(req.Project, firstNonEmpty(name, path.Base(path.Dir(real))))
	project = strings.ToLower(project)
	if !projectRE.MatchString(project) {
		return resp, backend.Errorf(backend.ErrInvalid, op, project, "the project name is 1–40 lowercase letters, digits, '_' or '-': give project")
	}
	if st, err := composeState(ctx, c, n, owner, project); err == nil {
		resp.Compose = &st
		return resp, backend.Errorf(backend.ErrExist, op, project, "the project is up already: compose_down it first, or give another project")
	} else if !errors.Is(err, backend.ErrNotFound) {
		return resp, err
	}
	st := ComposeStatus{Project: project, File: real, Network: project + "-net", Services: []ComposeService{}}
	resp.Compose = &st
	if _, err := n.CreateNetwork(ctx, backend.NetworkSpec{Owner: owner, Name: st.Network, Project: project, Persistent: req.Persistent}); err != nil {
		return resp, err
	}
	s.containersUsed.Store(true)
	for _, svc := range svcs {
		r, err := s.composeService(ctx, c, owner, req, project, st.Network, svc)
		resp.Notes = append(resp.Notes, r.Notes...)
		if err != nil {
			_ = composeDown(ctx, c, n, owner, st, true)
			st.Services = nil
			return resp, fmt.Errorf("compose_up: service %s (nothing of the project was kept): %w", svc.Name, err)
		}
		st.Services = append(st.Services, ComposeService{Service: svc.Name, Container: r.Container.Name, Image: r.Container.Image,
			State: r.Container.State, Running: r.Container.Running})
	}
	return resp, nil
}

// composeService creates one service's container as a create request
// would: same policy check, same create path.
func (s *Session) composeService(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, up ContainerRequest, project, network string, svc composeService) (ContainerResponse, error) {
	req := ContainerRequest{Operation: "create", Name: project + "-" + svc.Name, Image: svc.Image, Purpose: "compose " + project,
		Workdir: svc.Workdir, Mounts: svc.Mounts, Ports: svc.Ports, Env: svc.Env, Network: network, MountCwd: up.MountCwd,
		EnvPassthrough: up.EnvPassthrough, Timeout: up.Timeout, ServiceCommand: svc.Command, Project: project, Service: svc.Name,
		Persistent: up.Persistent}
	check, err := s.containerCheck(ctx, c, owner, req)
	if err != nil {
		return ContainerResponse{}, err
	}
	if err := s.checkContainers(ctx, c, owner, req, CheckRequest{Action: ActionContainersPrefix + "create", Container: &check}); err != nil {
		return ContainerResponse{}, err
	}
	return s.createContainer(ctx, c, owner, req)
}
