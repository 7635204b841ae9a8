//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/specgen"
	spec "github.com/opencontainers/runtime-spec/specs-go"
	nettypes "go.podman.io/common/libnetwork/types"

	"github.com/wai-dev/wai/host/backend"
)

// Labels of the containers agents manage, besides labelManaged,
// labelSession and labelUser. wai.kind tells them from session
// containers: the session machinery (list, gc, ps of sessions) skips them.
const (
	labelKind       = "wai.kind" // "container"
	kindContainer   = "container"
	labelCreated    = "wai.created"    // RFC 3339
	labelPersistent = "wai.persistent" // "true" or "false"
	labelEnvKeys    = "wai.env_keys"   // comma-separated names, never values
	// labelHome is the workspace directory of the configuration that
	// made the container: each configuration (and its wai ps, rm, gc)
	// sees only its own, as with session containers.
	labelHome = "wai.home"
)

// ContainerHome is the home directory of the managed containers' user:
// forwarded configuration lands there.
const ContainerHome = "/home/wai"

var containerNameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$`)

// CreateContainer creates, starts and provisions a hardened container; as
// with a session's, a failure because the files volume was removed under
// this process is tried once more.
func (b *Backend) CreateContainer(ctx context.Context, req backend.ContainerSpec) (backend.ContainerInfo, error) {
	info, err := b.createContainer(ctx, req)
	if err != nil && b.forgetLostFiles(err) {
		info, err = b.createContainer(ctx, req)
	}
	return info, err
}

func (b *Backend) createContainer(ctx context.Context, req backend.ContainerSpec) (backend.ContainerInfo, error) {
	const op = "containers.create"
	if req.Image == "" {
		req.Image = b.containersImage(ctx)
	}
	s, info, err := b.containerSpec(req)
	if err != nil {
		return backend.ContainerInfo{}, err
	}
	if info.Network != "" {
		n, err := b.lookupNetwork(ctx, op, backend.ContainerRef{Owner: req.Owner, Name: info.Network})
		if err != nil {
			return backend.ContainerInfo{}, err
		}
		// netavark accepts the mapping and forwards nothing: refuse
		// rather than publish a port that never answers.
		// The network goes with its session; a container outliving it
		// would hold it (and lose its network at the next gc).
		if req.Persistent && !n.Persistent {
			return backend.ContainerInfo{}, backend.Errorf(backend.ErrInvalid, op, info.Network,
				"a persistent container needs a persistent network: create_network with persistent = true")
		}
		if n.Internal && len(req.Ports) > 0 {
			return backend.ContainerInfo{}, backend.Errorf(backend.ErrInvalid, op, info.Network,
				"ports cannot be published from an internal network: drop the ports, or use a network with egress (containers.allow_network_egress)")
		}
	}
	if s.SeccompProfilePath, err = writeSeccompProfile(b.seccompDir); err != nil {
		return info, err
	}
	if err := b.useFilesOnService(ctx, s); err != nil {
		return info, err
	}
	if err := b.mountWorkspaceVolume(ctx, req, s); err != nil {
		return info, err
	}
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return info, err
	}
	if ok, err := containers.Exists(cctx, s.Name, nil); err != nil {
		return info, b.svc.wrap(ctx, op, s.Name, err)
	} else if ok {
		return info, backend.Errorf(backend.ErrExist, op, s.Name, "a container of that name exists: choose another name, or destroy it first")
	}
	resp, err := containers.CreateWithSpec(cctx, s, nil)
	if err != nil {
		if strings.Contains(err.Error(), "image not known") || strings.Contains(err.Error(), "no such image") {
			return info, backend.Errorf(backend.ErrUnavailable, op, s.Image,
				"the image is not present on the Podman service; no registry is used for it: build or load it there (scripts/setup-podman.sh builds %s)", LocalImage)
		}
		return info, b.svc.wrap(ctx, op, s.Name, err)
	}
	info.ID = resp.ID
	if err := containers.Start(cctx, resp.ID, nil); err != nil {
		b.removeQuiet(resp.ID)
		return info, startFailed(b, s.Name, err, ctx)
	}
	if err := b.provision(ctx, resp.ID, req.Files); err != nil {
		b.removeQuiet(resp.ID)
		return info, err
	}
	info.State, info.Running = "running", true
	if err := b.saveMeta(info); err != nil {
		b.log.Warn("runtime.podman.container_metadata", "container", info.Name, "error", err.Error())
	}
	b.log.InfoContext(ctx, "runtime.podman.container_created", "container", info.Name, "session", info.Session,
		"image", info.Image, "persistent", info.Persistent, "env_keys", strings.Join(info.EnvKeys, ","))
	return info, nil
}

// containerSpec validates req against the hard rules and builds the
// container's spec and the info describing it.
func (b *Backend) containerSpec(req backend.ContainerSpec) (*specgen.SpecGenerator, backend.ContainerInfo, error) {
	const op = "containers.create"
	cc := b.cfg.Containers
	var info backend.ContainerInfo
	if err := refusePrivileges(req); err != nil {
		return nil, info, err
	}
	name, err := b.containerName(req.Name, req.Purpose)
	if err != nil {
		return nil, info, err
	}
	image := req.Image
	if image == "" { // CreateContainer fills it in; a spec built alone
		if image = cc.Image; image == "" {
			image = b.image()
		}
	}
	if strings.ContainsAny(image, " \t\n") || strings.HasPrefix(image, "-") {
		return nil, info, backend.Errorf(backend.ErrInvalid, op, image, "not an image name")
	}
	if err := b.checkSnapshotImage(req.Owner, image); err != nil {
		return nil, info, err
	}
	mem := cc.memoryBytes
	if req.Memory != "" {
		if mem, err = parseBytes(req.Memory); err != nil || mem < 16<<20 {
			return nil, info, backend.Errorf(backend.ErrInvalid, op, req.Memory, "memory_limit: give a size of at least 16m, like \"4g\"")
		}
		if mem > cc.memoryBytes {
			return nil, info, backend.Errorf(backend.ErrPermission, op, req.Memory,
				"memory_limit is above the configured maximum %s (containers.memory in [backends.podman])", cc.Memory)
		}
	}
	s := specgen.NewSpecGenerator(image, false)
	s.Name, s.Hostname = name, name
	// Namespaces of its own, said explicitly rather than left to the
	// service's defaults.
	private := specgen.Namespace{NSMode: specgen.Private}
	s.UtsNS, s.PidNS, s.IpcNS = private, private, private
	now := time.Now().UTC()
	info = backend.ContainerInfo{Name: name, Image: image, Purpose: req.Purpose, Session: req.Owner.Session, User: req.Owner.User,
		Created: now, Persistent: req.Persistent, State: "created", Provisioning: req.Provisioning}
	env, keys, err := backend.PassthroughEnv(req.HostEnv, req.EnvPassthrough, cc.EnvPatterns, req.Env)
	if err != nil {
		return nil, info, err
	}
	info.EnvKeys = keys
	s.Labels = map[string]string{labelManaged: "true", labelKind: kindContainer, labelSession: req.Owner.Session,
		labelUser: req.Owner.User, labelCreated: now.Format(time.RFC3339), labelPurpose: req.Purpose,
		labelPersistent: fmt.Sprint(req.Persistent), labelEnvKeys: strings.Join(info.EnvKeys, ","), labelHome: b.cfg.fixedDir(),
		labelProject: req.Project, labelService: req.Service}
	info.Project, info.Service = req.Project, req.Service
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
	if s.Mounts, info.Mounts, err = b.containerMounts(req); err != nil {
		return nil, info, err
	}
	agent, err := b.containerAgentMount(s.Mounts)
	if err != nil {
		return nil, info, err
	}
	s.Mounts = append(s.Mounts, agent...)
	s.WorkDir = req.Workdir
	if s.WorkDir == "" && req.MountWorkspace {
		s.WorkDir = ContainerWorkspace
	}
	if s.WorkDir != "" && (!path.IsAbs(s.WorkDir) || path.Clean(s.WorkDir) != s.WorkDir) {
		return nil, info, backend.Errorf(backend.ErrInvalid, op, s.WorkDir, "workdir must be a clean absolute container path")
	}
	if err := s.Validate(); err != nil {
		return nil, info, backend.Errorf(backend.ErrInvalid, op, name, "the container spec is invalid: %v", err)
	}
	return s, info, nil
}

// harden applies what every container wai makes gets, the session's and
// the managed ones: no capabilities, no new privileges, both rlimits, and
// the resource limits given (the seccomp profile is set by the caller).
func (b *Backend) harden(s *specgen.SpecGenerator, mem int64, cpus float64, pids int64) {
	period := uint64(100000)
	quota := int64(cpus * float64(period))
	s.ResourceLimits = &spec.LinuxResources{
		// Swap is memory+swap: equal to the limit means no swap at all.
		Memory: &spec.LinuxMemory{Limit: &mem, Swap: &mem},
		CPU:    &spec.LinuxCPU{Quota: &quota, Period: &period},
		Pids:   &spec.LinuxPids{Limit: pids},
	}
	s.CapDrop = []string{"ALL"}
	s.NoNewPrivileges = ptr(true)
	// Both rlimits, always, with the short names the service expects
	// ("RLIMIT_" is prefixed server-side). Naming only nofile makes podman
	// 4.3 fill nproc with a default above the host's hard limit, and the
	// start fails without CAP_SYS_RESOURCE.
	s.Rlimits = []spec.POSIXRlimit{
		{Type: "nofile", Soft: b.cfg.Nofile, Hard: b.cfg.Nofile},
		{Type: "nproc", Soft: b.cfg.Nproc, Hard: b.cfg.Nproc},
	}
}

// refusePrivileges refuses what no configuration allows: a container
// with them could take the host.
func refusePrivileges(req backend.ContainerSpec) error {
	const op = "containers.create"
	deny := func(what string) error {
		return backend.Errorf(backend.ErrPermission, op, req.Name, "%s is refused: wai never gives a managed container %s", what, what)
	}
	switch {
	case req.Privileged:
		return deny("--privileged")
	case req.HostPID:
		return deny("the host's PID namespace")
	case req.HostIPC:
		return deny("the host's IPC namespace")
	case len(req.Devices) > 0:
		return deny("host devices")
	case req.Network == "host":
		return deny("the host network")
	}
	return nil
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

// containerMounts checks each mount against allowed_host_roots (after
// following every symlink of the host path) and forces read-only unless
// containers.allow_write_mounts; mount_cwd adds the session workspace.
func (b *Backend) containerMounts(req backend.ContainerSpec) ([]spec.Mount, []backend.ContainerMount, error) {
	const op = "containers.create"
	var ms []spec.Mount
	var shown []backend.ContainerMount
	if req.MountWorkspace && !b.cfg.volumeMode() { // a volume: mountWorkspaceVolume
		p, err := b.cfg.pathsFor(backend.WorkspaceSpec{Session: req.Owner.Session, User: req.Owner.User})
		if err != nil {
			return nil, nil, err
		}
		ms = append(ms, spec.Mount{Destination: ContainerWorkspace, Type: "bind", Source: p.dir, Options: []string{"rbind", "rw", "nosuid", "nodev"}})
		shown = append(shown, backend.ContainerMount{HostPath: p.dir, ContainerPath: ContainerWorkspace})
	}
	for _, m := range req.Mounts {
		host, err := b.allowedHostPath(op, m.HostPath)
		if err != nil {
			return nil, nil, err
		}
		dst := m.ContainerPath
		if !path.IsAbs(dst) || path.Clean(dst) != dst || dst == "/" || underAny(dst, "/proc", "/sys", "/dev") {
			return nil, nil, backend.Errorf(backend.ErrInvalid, op, dst, "container_path must be a clean absolute path other than /, /proc, /sys and /dev")
		}
		if req.MountWorkspace && dst == ContainerWorkspace {
			return nil, nil, backend.Errorf(backend.ErrInvalid, op, dst, "mount_cwd mounts the workspace there already")
		}
		ro := m.ReadOnly || !b.cfg.Containers.AllowWriteMounts
		mode := "rw"
		if ro {
			mode = "ro"
		}
		ms = append(ms, spec.Mount{Destination: dst, Type: "bind", Source: host, Options: []string{"rbind", mode, "nosuid", "nodev"}})
		shown = append(shown, backend.ContainerMount{HostPath: host, ContainerPath: dst, ReadOnly: ro})
	}
	return ms, shown, nil
}

// allowedHostPath resolves p (every symlink followed) and checks that it
// lies under allowed_host_roots.
func (b *Backend) allowedHostPath(op, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", backend.Errorf(backend.ErrInvalid, op, p, "host_path must be an absolute path")
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		return "", backend.Errorf(backend.ErrNotFound, op, p, "the host path does not exist")
	}
	if len(b.cfg.AllowedHostRoots) == 0 {
		return "", backend.Errorf(backend.ErrPermission, op, p,
			"no host path may be used: list the directories containers may use in allowed_host_roots of [backends.podman]")
	}
	if _, ok := underRoot(b.cfg.AllowedHostRoots, real); !ok {
		return "", backend.Errorf(backend.ErrPermission, op, p,
			"%s is not under allowed_host_roots %v of [backends.podman]", real, b.cfg.AllowedHostRoots)
	}
	return real, nil
}

func underAny(p string, roots ...string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// Interface guards
var _ backend.Containers = (*Backend)(nil)
