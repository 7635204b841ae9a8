//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/containers/podman/v5/pkg/specgen"
	nettypes "go.podman.io/common/libnetwork/types"

	"github.com/wai-dev/wai/host/backend"
)

// containerSpec validates req against the hard rules and builds the
// container's spec and the info describing it, one step each: the
// request's checks, identity, process, network, security and resources,
// mounts, working directory.
func (b *Backend) containerSpec(req backend.ContainerSpec) (*specgen.SpecGenerator, backend.ContainerInfo, error) {
	const op = "containers.create"
	name, image, mem, err := b.checkCreate(req)
	if err != nil {
		return nil, backend.ContainerInfo{}, err
	}
	s := newContainerSpec(name, image)
	info, env, err := b.specInfo(req, name, image)
	if err != nil {
		return nil, info, err
	}
	s.Labels = b.containerLabels(req, info)
	b.specProcess(s, req, env)
	if err := b.containerNetwork(s, req); err != nil {
		return nil, info, err
	}
	info.Network = s.Labels[labelNetwork]
	info.Ports = req.Ports
	b.harden(s, mem, b.cfg.Containers.CPUs, b.cfg.Containers.PidsLimit)
	if req.GPU {
		if err := b.addGPU(s, name); err != nil {
			return nil, info, err
		}
	}
	if err := b.specMounts(s, req, &info); err != nil {
		return nil, info, err
	}
	if s.WorkDir, err = specWorkdir(req); err != nil {
		return nil, info, err
	}
	if err := s.Validate(); err != nil {
		return nil, info, backend.Errorf(backend.ErrInvalid, op, name, "the container spec is invalid: %v", err)
	}
	return s, info, nil
}

// checkCreate checks what req asks for before a spec is built: no
// privileges, and a valid name, image and memory limit, which it returns.
func (b *Backend) checkCreate(req backend.ContainerSpec) (name, image string, mem int64, err error) {
	if err = refusePrivileges(req); err != nil {
		return "", "", 0, err
	}
	if name, err = b.containerName(req.Name, req.Purpose); err != nil {
		return "", "", 0, err
	}
	if image, err = b.specImage(req); err != nil {
		return "", "", 0, err
	}
	if mem, err = b.specMemory(req); err != nil {
		return "", "", 0, err
	}
	return name, image, mem, nil
}

// specImage is the image req names, else the configured one; a name that
// could pass for a flag or several words is refused, and so is another
// owner's snapshot.
func (b *Backend) specImage(req backend.ContainerSpec) (string, error) {
	image := req.Image
	if image == "" { // CreateContainer fills it in; a spec built alone
		if image = b.cfg.Containers.Image; image == "" {
			image = b.image()
		}
	}
	if strings.ContainsAny(image, " \t\n") || strings.HasPrefix(image, "-") {
		return "", backend.Errorf(backend.ErrInvalid, "containers.create", image, "not an image name")
	}
	if err := b.checkSnapshotImage(req.Owner, image); err != nil {
		return "", err
	}
	return image, nil
}

// specMemory is req's memory limit in bytes, at most the configured
// maximum, which is also the default.
func (b *Backend) specMemory(req backend.ContainerSpec) (int64, error) {
	const op = "containers.create"
	cc := b.cfg.Containers
	mem := cc.memoryBytes
	if req.Memory != "" {
		var err error
		if mem, err = parseBytes(req.Memory); err != nil || mem < 16<<20 {
			return 0, backend.Errorf(backend.ErrInvalid, op, req.Memory, "memory_limit: give a size of at least 16m, like \"4g\"")
		}
		if mem > cc.memoryBytes {
			return 0, backend.Errorf(backend.ErrPermission, op, req.Memory,
				"memory_limit is above the configured maximum %s (containers.memory in [backends.podman])", cc.Memory)
		}
	}
	return mem, nil
}

// newContainerSpec starts the spec of a container of this name and image.
func newContainerSpec(name, image string) *specgen.SpecGenerator {
	s := specgen.NewSpecGenerator(image, false)
	s.Name, s.Hostname = name, name
	// Namespaces of its own, said explicitly rather than left to the
	// service's defaults.
	private := specgen.Namespace{NSMode: specgen.Private}
	s.UtsNS, s.PidNS, s.IpcNS = private, private, private
	return s
}

// specInfo describes the container req asks for, and returns the
// environment it passes through from the host and req (info records the
// names, never the values).
func (b *Backend) specInfo(req backend.ContainerSpec, name, image string) (backend.ContainerInfo, map[string]string, error) {
	info := backend.ContainerInfo{Name: name, Image: image, Purpose: req.Purpose, Session: req.Owner.Session, User: req.Owner.User,
		Created: time.Now().UTC(), Persistent: req.Persistent, State: "created", Provisioning: req.Provisioning}
	env, keys, err := backend.PassthroughEnv(req.HostEnv, req.EnvPassthrough, b.cfg.Containers.EnvPatterns, req.Env)
	if err != nil {
		return info, nil, err
	}
	info.EnvKeys = keys
	info.Project, info.Service = req.Project, req.Service
	return info, env, nil
}

// containerLabels are the labels that make the container wai's and say
// whose it is (see labelKind).
func (b *Backend) containerLabels(req backend.ContainerSpec, info backend.ContainerInfo) map[string]string {
	return map[string]string{labelManaged: "true", labelKind: kindContainer, labelSession: req.Owner.Session,
		labelUser: req.Owner.User, labelCreated: info.Created.Format(time.RFC3339), labelPurpose: req.Purpose,
		labelPersistent: fmt.Sprint(req.Persistent), labelEnvKeys: strings.Join(info.EnvKeys, ","), labelHome: b.cfg.fixedDir(),
		labelProject: req.Project, labelService: req.Service}
}

// specProcess sets what the container runs, as whom, with which
// environment.
func (b *Backend) specProcess(s *specgen.SpecGenerator, req backend.ContainerSpec, env map[string]string) {
	s.Init = ptr(true)
	s.Command = []string{"sleep", "infinity"}
	if len(req.Command) > 0 {
		s.Command = append([]string{}, req.Command...)
	}
	s.User = b.cfg.User
	s.Env = map[string]string{"HOME": ContainerHome}
	for k, v := range env {
		s.Env[k] = v
	}
}

// specWorkdir is req's working directory; mount_cwd defaults it to the
// workspace.
func specWorkdir(req backend.ContainerSpec) (string, error) {
	dir := req.Workdir
	if dir == "" && req.MountWorkspace {
		dir = ContainerWorkspace
	}
	if dir != "" && (!path.IsAbs(dir) || path.Clean(dir) != dir) {
		return "", backend.Errorf(backend.ErrInvalid, "containers.create", dir, "workdir must be a clean absolute container path")
	}
	return dir, nil
}

func (b *Backend) containerName(name, purpose string) (string, error) {
	if name == "" {
		p := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, strings.ToLower(purpose))
		if p == "" {
			p = "ctr"
		}
		return "wai-" + p[:min(len(p), 20)] + "-" + newID()[:6], nil
	}
	if !containerNameRE.MatchString(name) {
		return "", backend.Errorf(backend.ErrInvalid, "containers.create", name,
			"a container name is 1–63 letters, digits, '_', '-' or '.', starting with a letter or digit")
	}
	if strings.HasPrefix(name, b.cfg.NamePrefix+"-") {
		return "", backend.Errorf(backend.ErrInvalid, "containers.create", name,
			"names starting with %q are the session containers': choose another", b.cfg.NamePrefix+"-")
	}
	return name, nil
}

func (b *Backend) containerNetwork(s *specgen.SpecGenerator, req backend.ContainerSpec) error {
	const op = "containers.create"
	switch req.Network {
	case "bridge":
		// Podman's network routes out: egress, the operator's call.
		if !b.cfg.Containers.AllowNetworkEgress {
			return backend.Errorf(backend.ErrPermission, op, "bridge", "network \"bridge\" reaches outside, and egress is off: "+
				"an operator allows it with containers.allow_network_egress = true in [backends.podman] (a person then approves each create); "+
				"without it, use no network (the default) or a network create_network made (its containers reach each other)")
		}
		s.NetNS = specgen.Namespace{NSMode: specgen.Bridge}
	case "", "none":
		// No network by default: a container reaching outside is asked
		// for (network = "bridge"), never given.
		s.NetNS = specgen.Namespace{NSMode: specgen.NoNetwork}
		if len(req.Ports) > 0 {
			return backend.Errorf(backend.ErrInvalid, op, "", "ports need a network, and a create gets none by default: "+
				"set network = \"bridge\" (egress: containers.allow_network_egress, and a person's approval), or drop the ports")
		}
	default:
		// A managed network: CreateContainer checked it is the owner's.
		if !isManagedNetworkName(req.Network) || !containerNameRE.MatchString(req.Network) {
			return backend.Errorf(backend.ErrInvalid, op, req.Network, "network must be \"none\" (the default), \"bridge\" or a network create_network made")
		}
		attachNetwork(s, req.Network, req.Service)
	}
	for _, p := range req.Ports {
		proto := p.Protocol
		if proto == "" {
			proto = "tcp"
		}
		if proto != "tcp" && proto != "udp" || p.ContainerPort == 0 {
			return backend.Errorf(backend.ErrInvalid, op, "", "a port needs container_port 1–65535 and protocol tcp or udp")
		}
		// Loopback only: a port published on every interface would serve
		// the container to the whole network.
		s.PortMappings = append(s.PortMappings, nettypes.PortMapping{HostIP: "127.0.0.1",
			ContainerPort: p.ContainerPort, HostPort: p.HostPort, Protocol: proto})
	}
	return nil
}
