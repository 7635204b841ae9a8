//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/wai-dev/wai/host/backend"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("workspace_size needs root (loop mounts)")
	}
}

// TestWorkspaceSizeLimit: with workspace_size 16m a command cannot store
// more: it gets "No space left on device"; a host-side write says the
// workspace is full and names the limit; freeing space makes room again.
func TestWorkspaceSizeLimit(t *testing.T) {
	t.Parallel()
	needRoot(t)
	b := newTestBackend(t, backend.Limits{}, map[string]any{"workspace_size": "16m"})
	w := openTest(t, b, false)
	res := sh(t, w, "dd if=/dev/zero of=big bs=1M count=32 2>&1; echo status $?; df -k --output=size . | tail -1")
	if !strings.Contains(res.Stdout, "No space left on device") || strings.Contains(res.Stdout, "status 0") {
		t.Fatalf("writing 32 MiB into a 16 MiB workspace: %q, want \"No space left on device\" and a failure", res.Stdout)
	}
	fields := strings.Fields(res.Stdout)
	if kb := fields[len(fields)-1]; len(kb) > 5 { // 16 MiB is 16384 KiB, less the file system's own
		t.Errorf("the workspace's file system is %s KiB, want about 16384", kb)
	}
	// Nothing went to the file system the state directory is on: the
	// image is sparse and at most its size.
	var st unix.Stat_t
	if err := unix.Stat(w.imagePath, &st); err != nil {
		t.Fatalf("the workspace image: %v", err)
	}
	if st.Size != 16<<20 || st.Blocks*512 > 16<<20 {
		t.Errorf("image %s: size %d, %d bytes allocated; want 16 MiB at most", w.imagePath, st.Size, st.Blocks*512)
	}
	// The file system may still find a few blocks once dd's are
	// committed: write until it cannot (16 MiB is at most 420 of these).
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		_, err = w.FS().Write(bg, backend.WriteRequest{Path: fmt.Sprintf("more-%d.txt", i), Content: strings.Repeat("x", 40000)})
	}
	if !errors.Is(err, backend.ErrInvalid) || errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "workspace is full") || !strings.Contains(err.Error(), "16 MiB") {
		t.Errorf("host-side write into a full workspace: %v, want ErrInvalid (a limit, not an outage) saying it is full and limited to 16 MiB", err)
	}
	if res := sh(t, w, "rm big more-* && echo ok >small && cat small"); res.Stdout != "ok\n" {
		t.Errorf("after freeing space: %q %q", res.Stdout, res.Stderr)
	}
	if _, err := w.FS().Write(bg, backend.WriteRequest{Path: "more.txt", Content: "fits\n"}); err != nil {
		t.Errorf("host-side write after freeing space: %v", err)
	}
}

// TestWorkspaceSizeSurvives: the files of a size-limited workspace
// survive container recreation, a kept session's Close and reopening by
// another backend, and a lost mount (as after a reboot); closing the
// session for good unmounts and removes the image.
func TestWorkspaceSizeSurvives(t *testing.T) {
	t.Parallel()
	needRoot(t)
	open := keptOpener(t, "size", map[string]any{"workspace_size": "32m"})
	b1, w1 := open()
	if got := sh(t, w1, "ls -A; echo one >f; stat -c %u .").Stdout; got != "65534\n" {
		t.Errorf("a fresh limited workspace lists %q, want it empty and owned by the container user", got)
	}
	if _, err := w1.Stop(bg); err != nil { // container recreation
		t.Fatal(err)
	}
	if got := sh(t, w1, "cat f").Stdout; got != "one\n" {
		t.Errorf("after the container was recreated: %q", got)
	}
	if err := w1.Close(bg); err != nil {
		t.Fatal(err)
	}
	if err := b1.Close(bg); err != nil {
		t.Fatal(err)
	}
	b2, w2 := open()
	if got := sh(t, w2, "cat f; echo two >>f").Stdout; got != "one\n" {
		t.Errorf("a kept session reopened by another backend reads %q", got)
	}
	if err := w2.Close(bg); err != nil {
		t.Fatal(err)
	}
	if err := b2.Close(bg); err != nil {
		t.Fatal(err)
	}
	// As after a reboot: no container, nothing mounted, the image stays.
	if err := b2.remove(bg, w2.ContainerName()); err != nil {
		t.Fatal(err)
	}
	if err := unix.Unmount(w2.dir, 0); err != nil {
		t.Fatalf("unmounting by hand: %v", err)
	}
	b3, w3 := open()
	if got := sh(t, w3, "cat f").Stdout; got != "one\ntwo\n" {
		t.Errorf("after the image was mounted again: %q", got)
	}
	b3.mu.Lock()
	w3.keepFlag = false
	b3.mu.Unlock()
	if err := w3.Close(bg); err != nil {
		t.Fatal(err)
	}
	if err := b3.Close(bg); err != nil {
		t.Fatal(err)
	}
	if _, mounted, _ := mountedImage(w3.dir); mounted {
		t.Errorf("%s is still mounted after the session closed", w3.dir)
	}
	for _, p := range []string{w3.dir, w3.imagePath} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left after the session closed: %v", p, err)
		}
	}
}

// TestWorkspaceSizeFailsClosedWithoutRoot: where the limit cannot be
// enforced (here: not root), opening the backend fails with
// ErrUnavailable saying why and how to opt out, never silently without a
// limit. The test binary runs itself again as user 65534.
func TestWorkspaceSizeFailsClosedWithoutRoot(t *testing.T) {
	t.Parallel()
	if os.Getenv("WAI_TEST_VOLUME_CHILD") == "1" {
		err := checkVolumeSupport(1 << 30)
		fmt.Printf("kind-unavailable=%v\nmessage=%v\n", errors.Is(err, backend.ErrUnavailable), err)
		return
	}
	needRoot(t)
	if err := checkVolumeSupport(1 << 30); err != nil {
		t.Fatalf("as root with mkfs.ext4: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // the user must reach the copy
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "podman.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^TestWorkspaceSizeFailsClosedWithoutRoot$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WAI_TEST_VOLUME_CHILD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running the check as 65534: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{"kind-unavailable=true", "workspace_size 1 GiB cannot be enforced", "only root", `workspace_size = "0"`} {
		if !strings.Contains(got, want) {
			t.Errorf("as a non-root user: %q lacks %q", got, want)
		}
	}
}
