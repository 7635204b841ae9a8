//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/plugins/podman"
)

// wai containers snapshot, snapshots, restore, rmsnapshot for a person;
// and --gpu, allowed by the policy's config, on a host without an NVIDIA
// CDI spec: a clear failure saying what to install.
func TestContainersCLISnapshotsPodman(t *testing.T) {
	t.Parallel()
	c := newCLITest(t, "default_policies = [\"blocklist\"]\n\n[[policies]]\nname = \"container_safety\"\nconfig = { allow_gpu = true }\n", "")
	id, config, wai := c.id, c.config, c.wai
	name, restored, snap := "wai-cli-s-"+id, "wai-cli-r-"+id, "cli-snap-"+id
	t.Cleanup(func() {
		wai("rm", "--force", name, restored)
		wai("rmsnapshot", snap, snap+"-2")
	})
	if r := wai("create", "--name", name, "--network", "none"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	wai("exec", name, "--", "echo from-the-cli > ~/note.txt")
	if r := wai("snapshot", name, snap); r.code != 0 || !strings.Contains(r.stdout, "saved snapshot "+snap) {
		t.Fatalf("snapshot: %+v", r)
	}
	if r := wai("snapshots"); r.code != 0 || !strings.Contains(r.stdout, snap) || !strings.Contains(r.stdout, name) {
		t.Errorf("snapshots: %+v", r)
	}
	if r := wai("rm", "--force", name); r.code != 0 {
		t.Fatalf("rm: %+v", r)
	}
	if r := wai("restore", snap, "--name", restored, "--network", "none"); r.code != 0 || !strings.Contains(r.stdout, "restored "+restored) {
		t.Fatalf("restore: %+v", r)
	}
	if r := wai("exec", restored, "--", "cat ~/note.txt"); r.code != 0 || r.stdout != "from-the-cli\n" {
		t.Errorf("the file in the restored container: %+v", r)
	}
	if r := wai("snapshot", restored, snap+"-2"); r.code != 0 {
		t.Fatalf("snapshot of the restored container: %+v", r)
	}
	if r := wai("rm", "--force", restored); r.code != 0 {
		t.Fatalf("rm: %+v", r)
	}
	// wai ps lists snapshots, wai gc --all keeps them, wai rm removes one.
	if r := inProcess(t, config, "ps", "--config", config); r.code != 0 || !strings.Contains(r.stdout, "snapshot/"+snap) || !strings.Contains(r.stdout, "snapshot/"+snap+"-2") {
		t.Errorf("wai ps: %+v", r)
	}
	if r := inProcess(t, config, "gc", "--all", "--config", config); r.code != 0 {
		t.Errorf("wai gc --all: %+v", r)
	}
	if r := inProcess(t, config, "rm", "--config", config, "snapshot/"+snap+"-2"); r.code != 0 {
		t.Errorf("wai rm snapshot/%s-2: %+v", snap, r)
	}
	if r := wai("snapshots"); r.code != 0 || !strings.Contains(r.stdout, snap) || strings.Contains(r.stdout, snap+"-2") {
		t.Errorf("snapshots after gc --all and rm of the second: %+v", r)
	}
	if r := wai("rmsnapshot", snap); r.code != 0 || !strings.Contains(r.stdout, "removed snapshot "+snap) {
		t.Errorf("rmsnapshot: %+v", r)
	}
	if r := wai("snapshots", "--json"); r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("snapshots after rmsnapshot: %+v", r)
	}
	if podmanHasGPU() {
		t.Log("this host has an NVIDIA CDI spec: the no-GPU failure is not checked")
		return
	}
	if r := wai("create", "--name", name+"-gpu", "--gpu", "--network", "none"); r.code == 0 || !strings.Contains(r.stderr, "nvidia-ctk cdi generate") {
		t.Errorf("--gpu without a GPU: %+v; want a failure saying what to install", r)
	}
}

// podmanHasGPU reports an NVIDIA CDI spec where Podman looks for one.
func podmanHasGPU() bool {
	for _, d := range podman.DefaultCDISpecDirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if data, err := os.ReadFile(filepath.Join(d, e.Name())); err == nil && strings.Contains(string(data), "nvidia.com/gpu") {
				return true
			}
		}
	}
	return false
}
