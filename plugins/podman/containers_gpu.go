package podman

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GPUDevice is the CDI device a container with gpu = true gets: every
// NVIDIA GPU the host's CDI spec names. CDI (the Container Device
// Interface) is how Podman passes GPUs: the NVIDIA Container Toolkit
// writes the spec (`nvidia-ctk cdi generate`), listing the device nodes,
// libraries and hooks, so wai names one device and mounts nothing itself.
const GPUDevice = "nvidia.com/gpu=all"

// DefaultCDISpecDirs are where CDI specs are looked for, as Podman does.
var DefaultCDISpecDirs = []string{"/etc/cdi", "/var/run/cdi"}

// gpuSetupAdvice says what to install for a GPU container.
const gpuSetupAdvice = "install the NVIDIA driver and the NVIDIA Container Toolkit on the host, then write the CDI spec: " +
	"`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml` (check with `nvidia-ctk cdi list`)"

// gpuHost is what the host has for NVIDIA GPU containers.
type gpuHost struct {
	// CDISpec is the spec file naming nvidia.com/gpu with a device
	// "all"; "" when there is none.
	CDISpec string
	// Toolkit and SMI are the paths of nvidia-ctk and nvidia-smi, "" when
	// absent: informational, a CDI spec is what a container needs.
	Toolkit string
	SMI     string
}

// detectGPU looks for an NVIDIA CDI spec in dirs and for the NVIDIA
// tools on PATH.
func detectGPU(dirs []string) gpuHost {
	var g gpuHost
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			p := filepath.Join(d, e.Name())
			if !e.Type().IsRegular() || g.CDISpec != "" {
				continue
			}
			if data, err := os.ReadFile(p); err == nil && nvidiaAll(e.Name(), data) {
				g.CDISpec = p
			}
		}
	}
	g.Toolkit, _ = exec.LookPath("nvidia-ctk")
	g.SMI, _ = exec.LookPath("nvidia-smi")
	return g
}

// nvidiaAll reports whether a CDI spec (JSON, or the YAML nvidia-ctk
// writes) is of kind nvidia.com/gpu with a device named "all". The YAML
// is read line by line, for its top-level kind and its devices' names:
// a YAML library for two keys is not worth the dependency.
func nvidiaAll(name string, data []byte) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		var s struct {
			Kind    string `json:"kind"`
			Devices []struct {
				Name string `json:"name"`
			} `json:"devices"`
		}
		if json.Unmarshal(data, &s) != nil || s.Kind != "nvidia.com/gpu" {
			return false
		}
		for _, d := range s.Devices {
			if d.Name == "all" {
				return true
			}
		}
		return false
	case ".yaml", ".yml":
	default:
		return false
	}
	kind, all := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "kind:"); ok {
			kind = unquote(v) == "nvidia.com/gpu"
			continue
		}
		t := strings.TrimSpace(line)
		t = strings.TrimSpace(strings.TrimPrefix(t, "- "))
		if v, ok := strings.CutPrefix(t, "name:"); ok && unquote(v) == "all" {
			all = true
		}
	}
	return kind && all
}

func unquote(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return strings.Trim(v, `"'`)
}
