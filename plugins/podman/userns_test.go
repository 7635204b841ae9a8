//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// TestUserNamespacesDenied: a command must not make a user namespace, in
// which it would hold every capability over namespaces of its own (mount,
// network, …): the seccomp profile refuses unshare and clone with
// CLONE_NEWUSER, clone3, and setns. Ordinary commands, threads and
// subshells still work (glibc falls back from clone3 to clone).
func TestUserNamespacesDenied(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	w := openTest(t, b, false)
	for _, cmd := range []string{"unshare -Urm true", "unshare -U true", "unshare -Ur --fork true"} {
		res := sh(t, w, cmd)
		if res.ExitCode == 0 {
			t.Errorf("%s succeeded inside the container: user namespaces must be denied", cmd)
		} else if !strings.Contains(res.Stderr, "Operation not permitted") {
			t.Errorf("%s: exit %d, stderr %q; want \"Operation not permitted\"", cmd, res.ExitCode, res.Stderr)
		}
	}
	// Entering a namespace is refused as well (here the container's own,
	// the only one there is to enter).
	if res := sh(t, w, "nsenter --user=/proc/1/ns/user true"); res.ExitCode == 0 {
		t.Errorf("nsenter into a user namespace succeeded")
	}
	// Processes, threads and pipelines still work.
	script := `sh -c 'echo sub' | cat; (sleep 0.1 & wait; echo bg) ; ` +
		`python3 -c 'import threading; t = threading.Thread(target=print, args=("thread",)); t.start(); t.join()'; ` +
		`python3 -c 'import os, subprocess; print(subprocess.run(["echo", "child"], capture_output=True, text=True).stdout.strip())'`
	res := sh(t, w, script)
	if got := strings.TrimSpace(res.Stdout); res.ExitCode != 0 || got != "sub\nbg\nthread\nchild" {
		t.Errorf("ordinary commands: exit %d stdout %q stderr %q", res.ExitCode, got, res.Stderr)
	}
}
