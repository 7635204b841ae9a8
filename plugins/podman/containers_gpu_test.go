//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// A CDI spec as `nvidia-ctk cdi generate` writes it (shortened).
const nvidiaCDIYAML = `---
cdiVersion: 0.5.0
containerEdits:
  deviceNodes:
  - path: /dev/nvidiactl
  hooks:
  - hookName: createContainer
    path: /usr/bin/nvidia-ctk
devices:
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: "0"
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: all
kind: nvidia.com/gpu
`

// gpu = true on a host without an NVIDIA CDI spec is a clear failure
// naming what to install; with one (a fake spec directory) the spec asks
// for the CDI device; other host devices stay refused either way.
func TestContainerGPUSpec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := specBackend(t, map[string]any{"containers": map[string]any{"cdi_spec_dirs": []string{dir, filepath.Join(dir, "missing")}}})
	req := backend.ContainerSpec{Owner: backend.ContainerOwner{Session: "s1"}, Name: "gpu-box", GPU: true}
	_, _, err := b.containerSpec(req)
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "nvidia-ctk cdi generate") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("gpu without a CDI spec: %v; want ErrUnavailable saying what to install", err)
	}
	c := b.gpuCheck()
	if c.Passed || !c.Optional || !strings.Contains(c.Guidance, "nvidia-ctk") || !strings.Contains(c.Detail, "nvidia-smi") {
		t.Errorf("preflight gpu check without a GPU: %+v; want an optional failed check with guidance", c)
	}
	// A spec of another kind, or without the device "all", is not one.
	writeSpec := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeSpec("other.yaml", strings.Replace(nvidiaCDIYAML, "kind: nvidia.com/gpu", "kind: vendor.com/fpga", 1))
	writeSpec("nvidia.json", `{"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[{"name":"0"}]}`)
	writeSpec("notes.txt", "kind: nvidia.com/gpu\nname: all\n")
	if _, _, err := b.containerSpec(req); !errors.Is(err, backend.ErrUnavailable) {
		t.Fatalf("gpu with no matching CDI spec: %v; want ErrUnavailable", err)
	}
	writeSpec("nvidia.yaml", nvidiaCDIYAML)
	s, _, err := b.containerSpec(req)
	if err != nil {
		t.Fatalf("gpu with an NVIDIA CDI spec: %v", err)
	}
	if len(s.Devices) != 1 || s.Devices[0].Path != GPUDevice {
		t.Errorf("devices %+v; want only %s", s.Devices, GPUDevice)
	}
	if s.CapDrop[0] != "ALL" || s.NoNewPrivileges == nil || !*s.NoNewPrivileges {
		t.Errorf("a gpu container lost its hardening: caps %v, no_new_privileges %v", s.CapDrop, s.NoNewPrivileges)
	}
	if c := b.gpuCheck(); !c.Passed || !strings.Contains(c.Detail, filepath.Join(dir, "nvidia.yaml")) {
		t.Errorf("preflight gpu check with a CDI spec: %+v", c)
	}
	for _, bad := range []backend.ContainerSpec{
		{Name: "dev-box", GPU: true, Devices: []string{"/dev/kvm"}},
		{Name: "priv-box", GPU: true, Privileged: true},
	} {
		if _, _, err := b.containerSpec(bad); !errors.Is(err, backend.ErrPermission) {
			t.Errorf("%s: %v; want ErrPermission", bad.Name, err)
		}
	}
	// Without gpu nothing is added.
	if s, _, err := b.containerSpec(backend.ContainerSpec{Name: "plain"}); err != nil || len(s.Devices) != 0 {
		t.Errorf("a create without gpu: devices %v, %v", s.Devices, err)
	}
}

func TestNvidiaCDISpec(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, text string
		want       bool
	}{
		{"a.yaml", nvidiaCDIYAML, true},
		{"a.yml", "kind: 'nvidia.com/gpu'\ndevices:\n  - name: \"all\" # every GPU\n", true},
		{"a.json", `{"kind":"nvidia.com/gpu","devices":[{"name":"0"},{"name":"all"}]}`, true},
		{"a.json", `{"kind":"nvidia.com/gpu","devices":[{"name":"0"}]}`, false},
		{"a.json", `not json`, false},
		{"a.yaml", "  kind: nvidia.com/gpu\ndevices:\n- name: all\n", false}, // kind not at the top level
		{"a.yaml", "kind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n", false},
		{"a.conf", nvidiaCDIYAML, false},
	} {
		if got := nvidiaAll(c.name, []byte(c.text)); got != c.want {
			t.Errorf("nvidiaAll(%s, %q) = %v, want %v", c.name, c.text, got, c.want)
		}
	}
}
