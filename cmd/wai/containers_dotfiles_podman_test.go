//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// wai containers create applies [dotfiles] of the config, from a
// repository given by its host path under a mount (the container clones
// it at the mount's path), and --no-dotfiles leaves it out.
func TestContainersCLIDotfilesPodman(t *testing.T) {
	t.Parallel()
	state, roots := plugbuild.StateDir(t), t.TempDir()
	repo := filepath.Join(roots, "dots")
	writeFile(t, roots, "dots-install.sh", "#!/bin/sh\necho \"installed from $PWD\" > \"$HOME/ran\"\n")
	// The container's user (65534) reads the repository through the mount.
	if err := os.MkdirAll(repo, 0o755); err != nil || os.Chmod(roots, 0o755) != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(roots, "dots-install.sh"), filepath.Join(repo, "install.sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(repo, "install.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	git := exec.Command("sh", "-c", "git init -q -b main && git add -A && git -c user.name=t -c user.email=t@t commit -qm dots")
	git.Dir = repo
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git (scripts/setup-podman.sh installs it): %v\n%s", err, out)
	}
	id := testID(t)
	table := podmanTable("wai-cli-"+id, roots)
	config := writePodmanConfig(t, state, fmt.Sprintf("\n[dotfiles]\nrepo = %q\n", repo), table)
	wai := containersCLI(t, config)
	name := "wai-cli-d-" + id
	// The test's context is gone by cleanup time: the backend itself
	// removes what the test made.
	b := managedBackend(t, state, table)
	t.Cleanup(func() {
		for _, n := range []string{name, name + "-n"} {
			_, _ = b.DestroyContainer(context.Background(), backend.ContainerRef{Name: n}, true)
		}
	})
	r := wai("create", "--name", name, "--network", "none", "--mount", roots+":/src")
	if r.code != 0 || !strings.Contains(r.stdout, "dotfiles: ran install.sh from "+repo) {
		t.Fatalf("create with [dotfiles]: %+v", r)
	}
	if r := wai("exec", name, "--", "cat ~/ran"); r.stdout != "installed from /home/wai/.dotfiles\n" {
		t.Errorf("the install script: %+v", r)
	}
	if r := wai("create", "--name", name+"-n", "--network", "none", "--mount", roots+":/src", "--no-dotfiles"); r.code != 0 || strings.Contains(r.stdout, "dotfiles") {
		t.Errorf("create --no-dotfiles: %+v", r)
	}
	if r := wai("exec", name+"-n", "--", "test -e ~/.dotfiles || echo none"); r.stdout != "none\n" {
		t.Errorf("--no-dotfiles cloned: %+v", r)
	}
	// Without the mount the repository is not visible: refused, nothing created.
	if r := wai("create", "--name", name+"-x", "--network", "none"); r.code == 0 || !strings.Contains(r.stderr, "not visible in the container") {
		t.Errorf("a host path the container cannot see: %+v", r)
	}
}
