//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/internal/plugbuild"
)

// The file tools through the kernel, unchanged, on a Podman service
// reached over ssh:// through the loopback sshd of scripts/setup-sshd.sh,
// with ssh://'s default workspace, a volume: write_file, read_file and
// edit_file go through wai-agent in the container, shell_execute sees the
// same files, and the state directory on this side holds no workspace.
// The binary runs with HOME set to the test sshd's, whose known_hosts
// holds the sshd's key (the bindings read HOME's known_hosts).
func TestFileToolsVolumeOverSSH(t *testing.T) {
	t.Parallel()
	sshDir := "/var/lib/wai-test/ssh"
	if c, err := net.DialTimeout("tcp", "127.0.0.1:42722", 3*time.Second); err != nil || !fileThere(filepath.Join(sshDir, "id_ed25519")) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the test sshd is required on CI (scripts/setup-podman.sh runs scripts/setup-sshd.sh): %v", err)
		}
		t.Skipf("no test sshd on 127.0.0.1:42722 (run scripts/setup-sshd.sh as root): %v", err)
	} else {
		c.Close()
	}
	bin := buildWithBundled(t)
	dir := t.TempDir()
	agent := agentBinary(t)
	state := plugbuild.StateDir(t)
	config := filepath.Join(dir, "wai.toml")
	// Only the plugins the test calls: every `wai call` loads each one named.
	toml := fmt.Sprintf("backend = \"podman\"\nstate_dir = %q\nbundled_tools = [\"shell\", \"vfs\"]\n\n[backends.podman]\nurl = %q\nidentity = %q\nworkspace_size = \"0\"\nimage = %q\nagent_path = %q\nname_prefix = %q\n",
		state, "ssh://root@127.0.0.1:42722/run/podman/podman.sock", filepath.Join(sshDir, "id_ed25519"), podmanImage(), agent,
		"wai-vssh-"+marker(t)[len("wai-test-"):][:8])
	if err := os.WriteFile(config, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	session := "vol-" + marker(t)[len("wai-test-"):][:8]
	call := func(tool, params string) string {
		t.Helper()
		cmd := exec.Command(bin, "call", "--config", config, "--session", session, tool, params)
		cmd.Env = append(os.Environ(), "HOME="+filepath.Join(sshDir, "home"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("wai call %s %s: %v\n%s", tool, params, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		cmd := exec.Command(bin, "rm", "--config", config, session)
		cmd.Env = append(os.Environ(), "HOME="+filepath.Join(sshDir, "home"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("wai rm %s: %v\n%s", session, err, out)
		}
	})
	call("write_file", `{"file_path":"notes/a.txt","content":"hello volume\n"}`)
	call("edit_file", `{"file_path":"notes/a.txt","old_string":"hello","new_string":"hi"}`)
	if out := call("read_file", `{"file_path":"notes/a.txt"}`); !strings.Contains(out, "hi volume") {
		t.Errorf("read_file: %s", out)
	}
	if out := call("shell_execute", `{"command":["sh","-c","cat notes/a.txt; df --output=source /workspace | tail -1"]}`); !strings.Contains(out, "hi volume") {
		t.Errorf("shell_execute cat: %s", out)
	}
	if out := call("ls", `{"path":"notes"}`); !strings.Contains(out, "a.txt") {
		t.Errorf("ls: %s", out)
	}
	// Nothing of the session's files on this side, only records (the
	// session's state file, the kernel's record of what was read).
	err := filepath.Walk(state, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() && fi.Name() == session {
			t.Errorf("the state directory holds %s: a volume workspace keeps no directory on wai's side", p)
		}
		if err == nil && fi.Name() == "a.txt" {
			t.Errorf("the workspace's file is on wai's side: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func fileThere(p string) bool { _, err := os.Stat(p); return err == nil }
