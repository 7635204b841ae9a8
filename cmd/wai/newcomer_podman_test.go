//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wai-dev/wai/internal/plugbuild"
	"github.com/wai-dev/wai/internal/podmansvc"
)

// newcomerPodmanConfig writes configs of the podman backend into dir,
// their sessions named with prefix, the name and the [backends.podman]
// table's lines given.
func newcomerPodmanConfig(t *testing.T, dir string) func(name, podman string) string {
	state := plugbuild.StateDir(t)
	prefix := "wai-nc-" + marker(t)[len("wai-test-"):][:8]
	return func(name, podman string) string {
		return writeFile(t, dir, name+".toml", fmt.Sprintf("backend = \"podman\"\nstate_dir = %q\n\n[backends.podman]\nname_prefix = %q\n%s",
			state, prefix, podman))
	}
}

func execTrue(cfg string) []string { return []string{"exec", "--config", cfg, "--", "true"} }

// What a machine without Podman looks like to the backend: no podman
// program, no socket. The backend looks podman up on the process's PATH
// (exec.LookPath), so this test changes it and runs alone, before the
// parallel tests, once the background builds look nothing up on it.
func TestNewcomerNoPodman(t *testing.T) {
	lookups.Wait()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.sock")
	noService := newcomerPodmanConfig(t, dir)("nosocket", fmt.Sprintf("url = \"unix://%s\"\n", missing))
	t.Setenv("PATH", t.TempDir())
	checkNewcomer(t, newcomerCase{
		args:  execTrue(noService),
		wrong: []string{"Podman is not installed here", "no podman on PATH", "no service socket at " + missing},
		next:  []string{"as root run scripts/setup-podman.sh", "apt-get install podman", "--backend"},
	})
}

// The newcomer's mistakes with Podman, against the real parts of this
// machine: no service at the configured socket, crun on a host whose
// cgroups it refuses, and an image that is neither present nor pullable.
// Podman is needed for the last two; on CI (CI=true) not having it fails
// the test.
func TestNewcomerPodmanErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := newcomerPodmanConfig(t, dir)
	missing := filepath.Join(dir, "missing.sock")
	noService := config("nosocket", fmt.Sprintf("url = \"unix://%s\"\n", missing))

	t.Run("no service socket", func(t *testing.T) {
		checkNewcomer(t, newcomerCase{
			args:  execTrue(noService),
			wrong: []string{"unix://" + missing, "the Podman service does not answer"},
			next:  []string{"scripts/setup-podman.sh", "podman system service --time=0 unix://" + missing, "[backends.podman] url", "wai preflight"},
		})
	})

	t.Run("misspelt key in [backends.podman]", func(t *testing.T) {
		checkNewcomer(t, newcomerCase{
			args:  execTrue(config("typo", "imag = \"x\"\n")),
			wrong: []string{`unknown field "imag" in [backends.podman]`},
			next:  []string{`did you mean "image"?`, "wai.example.toml"},
		})
	})

	// The rows below need a service that answers.
	if r := runInProcess(t, execTrue(config("probe", fmt.Sprintf("image = %q\n", podmanImage())))...); r.code != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Podman is required on CI (make test runs scripts/setup-podman.sh first): %v", r)
		}
		t.Skipf("no usable Podman service (run scripts/setup-podman.sh as root): %s", r.stderr)
	}

	t.Run("image missing, registry unreachable", func(t *testing.T) {
		const image = "docker.io/library/wai-does-not-exist:1"
		checkNewcomer(t, newcomerCase{
			args:  execTrue(config("noimage", fmt.Sprintf("image = %q\n", image))),
			wrong: []string{"image " + image, "not present and cannot be pulled", "pulling it failed"},
			next:  []string{"scripts/setup-podman.sh builds localhost/wai-python:bookworm", `set image = "localhost/wai-python:bookworm" in [backends.podman]`, "podman load -i"},
		})
	})

	t.Run("crun on hybrid cgroups", func(t *testing.T) {
		if fs := cgroupFS(t); fs == "cgroup2fs" {
			t.Skip("this host has pure cgroup v2, where crun works: the mistake cannot happen here")
		}
		sock := crunService(t)
		checkNewcomer(t, newcomerCase{
			args:  execTrue(config("crun", fmt.Sprintf("url = \"unix://%s\"\nimage = %q\n", sock, podmanImage()))),
			wrong: []string{"crun: cgroups in hybrid mode not supported", "crun cannot run containers on a cgroup v1 or hybrid host"},
			next:  []string{"scripts/setup-podman.sh installs runc", `runtime = "runc" under [engine] in a containers.conf drop-in`, "restart the service"},
		})
	})
}

// cgroupFS names the file system at /sys/fs/cgroup: cgroup2fs on a pure
// v2 host, tmpfs on a v1 or hybrid one.
func cgroupFS(t *testing.T) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs("/sys/fs/cgroup", &st); err != nil {
		t.Fatalf("statfs /sys/fs/cgroup: %v", err)
	}
	if st.Type == 0x63677270 { // CGROUP2_SUPER_MAGIC
		return "cgroup2fs"
	}
	return "other"
}

// crunService starts a second Podman service on a socket of the test's
// own, whose default runtime is crun: the genuine refusal a newcomer gets
// from a service set up without scripts/setup-podman.sh. It shares the
// machine's storage, as every podman command does, and stops with the
// test.
func crunService(t *testing.T) string {
	t.Helper()
	podmansvc.Require(t, "crun")
	return podmansvc.Run(t, "--runtime", "crun").Sock
}

// requirePodman skips (fails on CI) when no Podman service answers with
// the test image.
func requirePodman(t *testing.T, r result) {
	t.Helper()
	if r.code == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("Podman is required on CI (make test runs scripts/setup-podman.sh first): %v", r)
	}
	t.Skipf("no usable Podman service (run scripts/setup-podman.sh as root): %s", r.stderr)
}

// On a machine set up with scripts/setup-podman.sh and no config at all,
// `wai exec -- id -u` runs in a container as nobody, and says nothing
// about an unsandboxed backend.
func TestNoConfigExecRunsOnPodman(t *testing.T) {
	t.Parallel()
	r := runIn(t, noConfigHere(t, "CONTAINER_HOST="), "exec", "--", "id", "-u")
	requirePodman(t, r)
	if r.stdout != "65534\n" || strings.Contains(r.stderr, "notice") {
		t.Fatalf("want 65534 and no notice; got %v", r)
	}
}

// host_mounts and env set in wai.toml (an array of tables and an inline
// table under [backends.podman]) reach a real container: the mounted
// files are in /workspace and the variable is in the command's
// environment.
func TestPodmanHostMountsAndEnvFromConfig(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	data := filepath.Join(root, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, data, "hello.txt", "hi from the host\n")
	prefix := "wai-mnt-" + marker(t)[len("wai-test-"):][:8]
	cfg := writeFile(t, t.TempDir(), "wai.toml", fmt.Sprintf(`backend = "podman"
state_dir = %q

[backends.podman]
image = %q
name_prefix = %q
allowed_host_roots = [%q]
env = { WAI_TEST_FOO = "from-config" }

[[backends.podman.host_mounts]]
host_path = %q
mount_path = "data"
`, t.TempDir(), podmanImage(), prefix, root, data))
	r := runInProcess(t, "exec", "--config", cfg, "-c", `cat /workspace/data/hello.txt; echo "$WAI_TEST_FOO"`)
	requirePodman(t, r)
	if r.stdout != "hi from the host\nfrom-config\n" {
		t.Fatalf("want the mounted file and the variable; got %v", r)
	}
}
