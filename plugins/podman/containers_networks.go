//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/network"
	"github.com/containers/podman/v5/pkg/bindings/system"
	"github.com/containers/podman/v5/pkg/specgen"
	nettypes "go.podman.io/common/libnetwork/types"

	"github.com/wai-dev/wai/host/backend"
)

// Labels of managed networks (with labelManaged, labelKind, labelSession,
// labelUser, labelCreated, labelPersistent and labelHome as on managed
// containers), and of the containers a compose project runs.
const (
	kindNetwork    = "network"
	labelProject   = "wai.project" // the compose project
	labelService   = "wai.service" // the compose service a container runs
	labelNetwork   = "wai.network" // the managed network a container is on
	maxHostFileCap = 1 << 20
)

// reservedNetworks are network values create gives a meaning of its own;
// no managed network may take their names.
var reservedNetworks = []string{"", "bridge", "none", "host", "podman", "default", "private", "slirp4netns", "pasta"}

func isManagedNetworkName(n string) bool {
	for _, r := range reservedNetworks {
		if n == r {
			return false
		}
	}
	return !strings.HasPrefix(n, "container:") && !strings.HasPrefix(n, "ns:")
}

// CreateNetwork creates an internal network (egress only when
// containers.allow_network_egress) with name resolution between its
// containers (aardvark-dns).
func (b *Backend) CreateNetwork(ctx context.Context, req backend.NetworkSpec) (backend.NetworkInfo, error) {
	const op = "containers.create_network"
	if !containerNameRE.MatchString(req.Name) || !isManagedNetworkName(req.Name) {
		return backend.NetworkInfo{}, backend.Errorf(backend.ErrInvalid, op, req.Name,
			"a network name is 1–63 letters, digits, '_', '-' or '.', starting with a letter or digit, and not one of %s", strings.Join(reservedNetworks[1:], ", "))
	}
	if req.Egress && !b.cfg.Containers.AllowNetworkEgress {
		return backend.NetworkInfo{}, backend.Errorf(backend.ErrPermission, op, req.Name,
			"a network with egress needs containers.allow_network_egress = true in [backends.podman]; without egress its containers still reach each other")
	}
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return backend.NetworkInfo{}, err
	}
	// CNI drops name resolution from internal networks (podman 4.3):
	// refuse rather than make a network whose names never resolve.
	if info, err := system.Info(cctx, nil); err == nil && info.Host != nil && info.Host.NetworkBackend == "cni" {
		return backend.NetworkInfo{}, backend.Errorf(backend.ErrUnavailable, op, req.Name,
			"the Podman service uses the CNI network backend, which cannot resolve names on internal networks: "+
				"install netavark and aardvark-dns and set network_backend = \"netavark\" (scripts/setup-podman.sh does both)")
	}
	if ok, err := network.Exists(cctx, req.Name, nil); err != nil {
		return backend.NetworkInfo{}, b.svc.wrap(ctx, op, req.Name, err)
	} else if ok {
		return backend.NetworkInfo{}, b.networkNameTaken(ctx, op, req.Owner, req.Name)
	}
	now := time.Now().UTC()
	n := nettypes.Network{Name: req.Name, Driver: "bridge", Internal: !req.Egress, DNSEnabled: true,
		Labels: map[string]string{labelManaged: "true", labelKind: kindNetwork, labelSession: req.Owner.Session, labelUser: req.Owner.User,
			labelCreated: now.Format(time.RFC3339), labelPersistent: fmt.Sprint(req.Persistent), labelHome: b.cfg.fixedDir(), labelProject: req.Project}}
	got, err := network.Create(cctx, &n)
	if err != nil {
		return backend.NetworkInfo{}, b.svc.wrap(ctx, op, req.Name, err)
	}
	b.log.InfoContext(ctx, "runtime.podman.network_created", "network", got.Name, "session", req.Owner.Session, "internal", got.Internal)
	return networkInfo(got), nil
}

func networkInfo(n nettypes.Network) backend.NetworkInfo {
	lb := n.Labels
	info := backend.NetworkInfo{Name: n.Name, ID: n.ID, Session: lb[labelSession], User: lb[labelUser], Internal: n.Internal,
		Persistent: lb[labelPersistent] == "true", Project: lb[labelProject]}
	info.Created, _ = time.Parse(time.RFC3339, lb[labelCreated])
	for _, s := range n.Subnets {
		info.Subnets = append(info.Subnets, s.Subnet.String())
	}
	return info
}

// managedNetworks lists this configuration's managed networks of owner
// (every owner with all), with the managed containers on each.
func (b *Backend) managedNetworks(ctx context.Context, op string, owner backend.ContainerOwner, all bool) ([]backend.NetworkInfo, error) {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	l, err := network.List(cctx, new(network.ListOptions).WithFilters(map[string][]string{
		"label": {labelManaged + "=true", labelKind + "=" + kindNetwork, labelHome + "=" + b.cfg.fixedDir()}}))
	if err != nil {
		return nil, b.svc.wrap(ctx, op, "", err)
	}
	cs, err := b.listContainers(ctx, backend.ContainerOwner{}, true)
	if err != nil {
		return nil, err
	}
	out := []backend.NetworkInfo{}
	for _, n := range l {
		lb := n.Labels
		if !all && (lb[labelUser] != owner.User || owner.Session != "" && lb[labelSession] != owner.Session) {
			continue
		}
		info := networkInfo(n)
		for _, c := range cs {
			if c.Network == n.Name {
				info.Containers = append(info.Containers, c.Name)
			}
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ListNetworks lists the owner's managed networks.
func (b *Backend) ListNetworks(ctx context.Context, owner backend.ContainerOwner) ([]backend.NetworkInfo, error) {
	return b.managedNetworks(ctx, "containers.list_networks", owner, false)
}

// ListManagedNetworks lists every user's managed networks (wai ps).
func (b *Backend) ListManagedNetworks(ctx context.Context) ([]backend.NetworkInfo, error) {
	return b.managedNetworks(ctx, "containers.list_networks", backend.ContainerOwner{}, true)
}

// lookupNetwork finds one of the user's managed networks (any session of
// the user); anything else is ErrNotFound.
func (b *Backend) lookupNetwork(ctx context.Context, op string, ref backend.ContainerRef) (backend.NetworkInfo, error) {
	if containerNameRE.MatchString(ref.Name) {
		l, err := b.managedNetworks(ctx, op, backend.ContainerOwner{User: ref.Owner.User}, false)
		if err != nil {
			return backend.NetworkInfo{}, err
		}
		for _, n := range l {
			if n.Name == ref.Name {
				return n, nil
			}
		}
	}
	return backend.NetworkInfo{}, backend.Errorf(backend.ErrNotFound, op, ref.Name,
		"no such managed network: create it with create_network (list_networks shows yours), or use bridge or none")
}

// DestroyNetwork removes a network no container uses.
func (b *Backend) DestroyNetwork(ctx context.Context, ref backend.ContainerRef) (backend.NetworkInfo, error) {
	const op = "containers.destroy_network"
	n, err := b.lookupNetwork(ctx, op, ref)
	if err != nil {
		return n, err
	}
	return n, b.removeNetwork(ctx, op, n)
}

func (b *Backend) removeNetwork(ctx context.Context, op string, n backend.NetworkInfo) error {
	if len(n.Containers) > 0 {
		return backend.Errorf(backend.ErrUnavailable, op, n.Name, "the network is in use by %s: destroy those containers first",
			strings.Join(n.Containers, ", "))
	}
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return err
	}
	// Not forced: a container attached behind wai's back keeps it.
	if _, err := network.Remove(cctx, n.Name, nil); err != nil {
		if strings.Contains(err.Error(), "in use") || strings.Contains(err.Error(), "being used") {
			return backend.Errorf(backend.ErrUnavailable, op, n.Name, "the network is in use by containers wai does not manage: remove them first")
		}
		return b.svc.wrap(ctx, op, n.Name, err)
	}
	b.log.InfoContext(ctx, "runtime.podman.network_destroyed", "network", n.Name, "session", n.Session)
	return nil
}

// DestroyNetworks removes the owner's networks (keepPersistent: only the
// non-persistent ones).
func (b *Backend) DestroyNetworks(ctx context.Context, owner backend.ContainerOwner, keepPersistent bool) ([]backend.NetworkInfo, error) {
	const op = "containers.destroy_network"
	l, err := b.managedNetworks(ctx, op, owner, false)
	if err != nil {
		return nil, err
	}
	return removeEach(l, keepPersistent, func(n backend.NetworkInfo) bool { return n.Persistent },
		func(n backend.NetworkInfo) error { return b.removeNetwork(ctx, op, n) })
}

// ReadHostFile reads a small file in the session workspace or under
// allowed_host_roots (symlinks never lead out).
func (b *Backend) ReadHostFile(_ context.Context, owner backend.ContainerOwner, p string, maxBytes int64) ([]byte, string, error) {
	const op = "containers.read_file"
	maxBytes = min(max(maxBytes, 1), maxHostFileCap)
	hs, err := b.openHostSide(op, owner, p, false)
	if err != nil {
		return nil, "", err
	}
	defer hs.root.Close()
	f, err := hs.root.Open(hs.rel)
	if err != nil {
		return nil, "", backend.Errorf(backend.ErrNotFound, op, p, "cannot open the file: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, "", backend.Errorf(backend.ErrInvalid, op, p, "cannot read the file: %v", err)
	}
	if int64(len(data)) > maxBytes {
		return nil, "", backend.Errorf(backend.ErrInvalid, op, p, "the file is larger than %d bytes", maxBytes)
	}
	return data, hs.root.Name() + "/" + hs.rel, nil
}

// attachNetwork puts the container on a managed network (verified by the
// caller), its name and service resolvable by the network's others.
func attachNetwork(s *specgen.SpecGenerator, name, service string) {
	opts := nettypes.PerNetworkOptions{}
	if service != "" {
		opts.Aliases = []string{service}
	}
	s.NetNS = specgen.Namespace{NSMode: specgen.Bridge}
	s.Networks = map[string]nettypes.PerNetworkOptions{name: opts}
	s.Labels[labelNetwork] = name
}

// Interface guards
var (
	_ backend.ContainerNetworks    = (*Backend)(nil)
	_ backend.ManagedNetworkLister = (*Backend)(nil)
)
