//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/internal/gittest"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// profilesConfig writes a config for the containers tests of purposes and
// returns it with wai, a runner of `wai containers SUB --config … ARGS`.
func profilesConfig(t *testing.T, prefix string) (string, func(args ...string) result) {
	t.Helper()
	config := writePodmanConfig(t, plugbuild.StateDir(t), "", podmanTable(prefix, ""))
	return config, containersCLI(t, config)
}

// Each purpose image has its tool chain, and its profile sets the
// container up: python runs pytest in the profile's venv, node runs a
// script, go builds a program, cargo builds a crate (offline, no deps).
// The images come from scripts/setup-podman.sh; a missing one fails with
// the command that builds it (build_images is off).
func TestPurposeProfilesPodman(t *testing.T) {
	t.Parallel()
	id := testID(t)
	_, wai := profilesConfig(t, "wai-prof-"+id)
	cases := []struct{ purpose, command, want string }{
		{"python", `mkdir -p /tmp/t && printf 'def test_sum():\n    assert 1 + 1 == 2\n' > /tmp/t/test_sum.py && cd /tmp/t && "$HOME/.venv/bin/python" -m pytest -q 2>&1 | tail -n 1 | cut -d' ' -f1,2`, "1 passed"},
		{"node", `printf 'console.log("node says " + 6 * 7)\n' > /tmp/a.js && node /tmp/a.js`, "node says 42"},
		{"go", `mkdir -p /tmp/h && cd /tmp/h && printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("go says hi") }\n' > main.go && go mod init example.com/h >/dev/null 2>&1 && go build -o h . && ./h`, "go says hi"},
		{"rust", `cd /tmp && cargo new --vcs none --quiet hc && cd hc && cargo build --offline --quiet && ./target/debug/hc`, "Hello, world!"},
		{"clean", `command -v cc >/dev/null && command -v git >/dev/null && ls -A "$HOME"`, ""},
	}
	for _, c := range cases {
		t.Run(c.purpose, func(t *testing.T) {
			t.Parallel() // each its own container
			name := "wai-prof-" + c.purpose + "-" + id
			removeAtEnd(t, wai, name)
			r := wai("create", "--name", name, "--purpose", c.purpose)
			if r.code != 0 || !strings.Contains(r.stderr, "profile "+c.purpose) {
				t.Fatalf("create: %+v", r)
			}
			if strings.Contains(r.stderr, "failed") {
				t.Errorf("setup failed: %s", r.stderr)
			}
			if r := wai("exec", name, "--timeout", "600", "--", c.command); r.code != 0 || strings.TrimSpace(r.stdout) != c.want {
				t.Errorf("exec: %+v, want %q", r, c.want)
			}
		})
	}
	if r := wai("create", "--name", "x-"+id, "--purpose", "cobol"); r.code == 0 || !strings.Contains(r.stderr, "try-repo") {
		t.Errorf("unknown purpose: %+v, want the profiles listed", r)
	}
}

// try-repo clones a file:// repository on the host, detects python from
// its pyproject.toml, unpacks it in a python container and sets it up;
// its tests run there with pytest. A Dockerfile alone gives general with
// a note.
func TestTryRepoPodman(t *testing.T) {
	t.Parallel()
	id := testID(t)
	_, wai := profilesConfig(t, "wai-try-"+id)
	py := gittest.Repo(t, filepath.Join(t.TempDir(), "pyproj"), map[string]string{
		"pyproject.toml":     "[project]\nname = \"pyproj\"\nversion = \"0.1\"\n",
		"tests/test_calc.py": "def test_calc():\n    assert 2 * 21 == 42\n",
	})
	name := "wai-try-py-" + id
	removeAtEnd(t, wai, name)
	r := wai("create", "--name", name, "--purpose", "try-repo", "--repo", "file://"+py)
	if r.code != 0 || !strings.Contains(r.stderr, "profile python") || !strings.Contains(r.stderr, "pyproject.toml") {
		t.Fatalf("create: %+v", r)
	}
	r = wai("exec", name, "--", `cd "$HOME/pyproj" && git log --oneline | wc -l && "$HOME/.venv/bin/python" -m pytest -q 2>&1 | tail -n 1 | cut -d' ' -f1,2`)
	if r.code != 0 || r.stdout != "1\n1 passed\n" {
		t.Errorf("pytest in the cloned repository: %+v", r)
	}
	docker := gittest.Repo(t, filepath.Join(t.TempDir(), "dock"), map[string]string{"Dockerfile": "FROM scratch\n"})
	dname := "wai-try-dock-" + id
	removeAtEnd(t, wai, dname)
	if r := wai("create", "--name", dname, "--purpose", "try-repo", "--repo", "file://"+docker); r.code != 0 ||
		!strings.Contains(r.stderr, "profile general") || !strings.Contains(r.stderr, "does not build Dockerfiles") {
		t.Errorf("Dockerfile repository: %+v", r)
	}
	if r := wai("create", "--name", "x-"+id, "--purpose", "try-repo", "--repo", "ext::sh -c true"); r.code == 0 {
		t.Errorf("an ext:: URL was accepted: %+v", r)
	}
}
