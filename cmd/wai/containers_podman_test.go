//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wai containers for a person: create, exec, ls, cp both ways, rm, all
// through the kernel (the gates apply here too).
func TestContainersCLIPodman(t *testing.T) {
	t.Parallel()
	c := newCLITest(t, "", "\n[backends.podman.containers]\nallow_write_mounts = true\n")
	id, roots, config, wai := c.id, c.roots, c.config, c.wai
	name := "wai-cli-c-" + id
	removeAtEnd(t, wai, name)
	writeFile(t, roots, "in.txt", "from the host\n")
	if r := wai("create", "--name", name, "--env", "GREETING=hi there", "--mount", roots+":/src"); r.code != 0 || !strings.Contains(r.stdout, "created "+name) {
		t.Fatalf("create: %+v", r)
	}
	if r := wai("exec", name, "--", "echo $GREETING; ls /src"); r.code != 0 || r.stdout != "hi there\nin.txt\n" {
		t.Errorf("exec: %+v", r)
	}
	if r := wai("exec", name, "--", "exit 3"); r.code != 3 {
		t.Errorf("exec's status: %+v, want 3", r)
	}
	if r := wai("ls"); r.code != 0 || !strings.Contains(r.stdout, name) || !strings.Contains(r.stdout, "true") {
		t.Errorf("ls: %+v", r)
	}
	if r := wai("ls", "--json"); r.code != 0 || !strings.HasPrefix(r.stdout, "[") || !strings.Contains(r.stdout, `"name": "`+name+`"`) {
		t.Errorf("ls --json: %+v", r)
	}
	if r := wai("cp", filepath.Join(roots, "in.txt"), name+":/tmp/in.txt"); r.code != 0 {
		t.Errorf("cp in: %+v", r)
	}
	wai("exec", name, "--", "rev /tmp/in.txt > /tmp/out.txt")
	if r := wai("cp", name+":/tmp/out.txt", filepath.Join(roots, "out.txt")); r.code != 0 {
		t.Errorf("cp out: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(roots, "out.txt")); string(got) != "tsoh eht morf\n" {
		t.Errorf("copied out %q", got)
	}
	// Stopped, it keeps its files; start brings it back.
	if r := wai("stop", "--force", name); r.code != 0 || !strings.Contains(r.stdout, "stopped "+name) {
		t.Errorf("stop: %+v", r)
	}
	if r := wai("start", name); r.code != 0 || !strings.Contains(r.stdout, "started "+name) {
		t.Errorf("start: %+v", r)
	}
	if r := wai("exec", name, "--", "cat /tmp/out.txt"); r.code != 0 || r.stdout != "tsoh eht morf\n" {
		t.Errorf("after stop and start: %+v; want the file kept", r)
	}
	if r := wai("create", "--name", name+"-x", "--mount", "/etc:/x"); r.code == 0 || !strings.Contains(r.stderr, "is not under allowed_host_roots") {
		t.Errorf("an /etc mount: %+v, want the backend's refusal (outside allowed_host_roots), before any approval", r)
	}
	// wai ps lists it (persistent: KEEP true), wai rm removes it by that name.
	if r := inProcess(t, config, "ps", "--config", config); r.code != 0 || !strings.Contains(r.stdout, "container/"+name) {
		t.Errorf("wai ps: %+v", r)
	}
	kept := name + "-k"
	if r := wai("create", "--name", kept, "--network", "none"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	removeAtEnd(t, wai, kept)
	if r := inProcess(t, config, "rm", "--config", config, "container/"+kept); r.code != 0 {
		t.Errorf("wai rm container/%s: %+v", kept, r)
	}
	if r := wai("ls"); strings.Contains(r.stdout, kept) {
		t.Errorf("ls after wai rm: %+v", r)
	}
	if r := wai("rm", name); r.code != 0 || !strings.Contains(r.stdout, "removed "+name) {
		t.Errorf("rm: %+v", r)
	}
	if r := wai("ls"); strings.Contains(r.stdout, name) {
		t.Errorf("ls after rm: %+v", r)
	}
}
