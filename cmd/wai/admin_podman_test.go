//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminPodman: wai preflight passes on a set-up machine; wai ps shows
// a kept session; wai gc leaves it (recently used) but removes a stray
// workspace, and wai gc --all removes the kept session too.
func TestAdminPodman(t *testing.T) {
	state := t.TempDir()
	prefix := "wai-cli-" + marker(t)[len("wai-test-"):][:8]
	config := filepath.Join(t.TempDir(), "wai.toml")
	toml := fmt.Sprintf("backend = \"podman\"\nstate_dir = %q\n\n[backends.podman]\nimage = %q\nname_prefix = %q\n", state, podmanImage(), prefix)
	if err := os.WriteFile(config, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := inProcess(t, config, "preflight", "--config", config)
	if r.code != exitOK {
		if os.Getenv("CI") != "true" && strings.Contains(r.stdout, "FAIL  service reachable") {
			t.Skipf("no Podman service (run scripts/setup-podman.sh as root): %s", r.stdout)
		}
		t.Fatalf("wai preflight: want exit 0; got %v", r)
	}
	if !strings.Contains(r.stdout, "OK    hardened container runs") {
		t.Errorf("wai preflight did not run a container: %v", r)
	}

	session := "kept"
	r = inProcess(t, config, "exec", "--session", session, "--", "sh", "-c", "echo x >f")
	if r.code != 0 {
		t.Fatalf("wai exec --session: %v", r)
	}
	name := prefix + "-" + session
	t.Cleanup(func() { inProcess(t, config, "gc", "--all", "--config", config) })
	r = inProcess(t, config, "ps", "--config", config)
	if r.code != 0 || !strings.Contains(r.stdout, name) || !strings.Contains(r.stdout, "running") {
		t.Fatalf("wai ps: want %s listed as running; got %v", name, r)
	}
	stray := filepath.Join(state, "podman", "stray-"+prefix)
	if err := os.MkdirAll(stray, 0o755); err != nil {
		t.Fatal(err)
	}
	r = inProcess(t, config, "gc", "-v", "--config", config)
	if r.code != 0 || !strings.Contains(r.stdout, "removed workspace "+stray) || !strings.Contains(r.stdout, "kept    container "+name) {
		t.Errorf("wai gc -v: want the stray workspace removed and the kept session left; got %v", r)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("the stray workspace survived wai gc: %v", err)
	}
	r = inProcess(t, config, "gc", "--all", "--config", config)
	if r.code != 0 || !strings.Contains(r.stdout, "removed container "+name) {
		t.Errorf("wai gc --all: want %s removed; got %v", name, r)
	}
	r = inProcess(t, config, "ps", "--json", "--config", config)
	if r.code != 0 || strings.Contains(r.stdout, name) {
		t.Errorf("wai ps after gc --all: want %s gone; got %v", name, r)
	}
}
