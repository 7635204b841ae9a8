//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/containers/podman/v5/pkg/specgen"

	"github.com/wai-dev/wai/host/backend"
)

// specBackend is a backend with a config and no service: enough to build
// container specs.
func specBackend(t *testing.T, extra map[string]any) *Backend {
	t.Helper()
	raw, _ := json.Marshal(extra)
	cfg, err := ParseConfig(raw, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := &Backend{cfg: cfg}
	b.pull.image = cfg.Image
	return b
}

// The spec every create gets, read without a service: the seed's unit
// cases (minimal, mounts, ports, env, labels, security flags).
func TestContainerSpecUnit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	b := specBackend(t, map[string]any{"allowed_host_roots": []string{root},
		"containers": map[string]any{"env_patterns": []string{"MY_*"}, "memory": "2g", "allow_network_egress": true}})
	s, info, err := b.containerSpec(backend.ContainerSpec{Owner: backend.ContainerOwner{User: "ann", Session: "u.ann.s1"},
		Purpose: "node", Persistent: true, Mounts: []backend.ContainerMount{{HostPath: root, ContainerPath: "/src"}},
		Network: "bridge", Ports: []backend.ContainerPort{{HostPort: 8080, ContainerPort: 80}},
		EnvPassthrough: backend.EnvPassthrough{Mode: backend.EnvPassAuto}, HostEnv: map[string]string{"MY_X": "1", "OPENAI_API_KEY": "k", "WAI_MCP_TOKEN": "t"},
		Env: map[string]string{"E": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Name, "wai-node-") || s.Hostname != s.Name {
		t.Errorf("name %q hostname %q", s.Name, s.Hostname)
	}
	if !slices.Equal(s.CapDrop, []string{"ALL"}) || s.NoNewPrivileges == nil || !*s.NoNewPrivileges || s.Privileged != nil && *s.Privileged {
		t.Errorf("security flags: capdrop %v nnp %v privileged %v", s.CapDrop, s.NoNewPrivileges, s.Privileged)
	}
	if r := s.ResourceLimits; *r.Memory.Limit != 2<<30 || *r.Memory.Swap != 2<<30 || r.Pids.Limit != 256 {
		t.Errorf("limits: memory %d swap %d pids %d", *r.Memory.Limit, *r.Memory.Swap, r.Pids.Limit)
	}
	if s.User != DefaultUser || s.Env["HOME"] != ContainerHome || s.Env["MY_X"] != "1" || s.Env["E"] != "2" || s.Env["OPENAI_API_KEY"] != "" || s.Env["WAI_MCP_TOKEN"] != "" {
		t.Errorf("user %q env %v: want the configured patterns (MY_*) and the explicit env", s.User, s.Env)
	}
	if len(s.PortMappings) != 1 || s.PortMappings[0].HostIP != "127.0.0.1" || s.PortMappings[0].HostPort != 8080 {
		t.Errorf("ports %+v", s.PortMappings)
	}
	if len(s.Mounts) != 1 || !slices.Contains(s.Mounts[0].Options, "ro") || info.Mounts[0].ReadOnly != true {
		t.Errorf("mounts %+v: want read-only without allow_write_mounts", s.Mounts)
	}
	if s.Labels[labelUser] != "ann" || s.Labels[labelPersistent] != "true" || s.Labels[labelEnvKeys] != "E,MY_X" || s.Labels[labelHome] != b.cfg.fixedDir() {
		t.Errorf("labels %v", s.Labels)
	}
	if _, _, err := b.containerSpec(backend.ContainerSpec{Memory: "4g"}); err == nil {
		t.Error("a memory_limit above containers.memory was accepted")
	}
	w := specBackend(t, map[string]any{"allowed_host_roots": []string{root}, "containers": map[string]any{"allow_write_mounts": true}})
	s, _, _ = w.containerSpec(backend.ContainerSpec{Mounts: []backend.ContainerMount{{HostPath: root, ContainerPath: "/src"}, {HostPath: root, ContainerPath: "/ro", ReadOnly: true}}})
	if !slices.Contains(s.Mounts[0].Options, "rw") || !slices.Contains(s.Mounts[1].Options, "ro") {
		t.Errorf("allow_write_mounts: %+v", s.Mounts)
	}
}

// A create gets no network unless it asks; "bridge" routes out, so it
// needs containers.allow_network_egress, and ports need a network.
func TestContainerNetworkDefault(t *testing.T) {
	t.Parallel()
	b := specBackend(t, nil)
	s, _, err := b.containerSpec(backend.ContainerSpec{})
	if err != nil || s.NetNS.NSMode != specgen.NoNetwork {
		t.Errorf("default network: %+v, %v; want none", s.NetNS, err)
	}
	if _, _, err := b.containerSpec(backend.ContainerSpec{Network: "bridge"}); !errors.Is(err, backend.ErrPermission) ||
		!strings.Contains(err.Error(), "allow_network_egress") {
		t.Errorf("bridge without allow_network_egress: %v, want ErrPermission naming the key", err)
	}
	if _, _, err := b.containerSpec(backend.ContainerSpec{Ports: []backend.ContainerPort{{ContainerPort: 80}}}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("ports without a network: %v, want ErrInvalid", err)
	}
	e := specBackend(t, map[string]any{"containers": map[string]any{"allow_network_egress": true}})
	if s, _, err := e.containerSpec(backend.ContainerSpec{Network: "bridge"}); err != nil || s.NetNS.NSMode != specgen.Bridge {
		t.Errorf("bridge with allow_network_egress: %+v, %v", s, err)
	}
}
