//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"os"
	"strings"
	"testing"

	"github.com/wai-dev/wai/plugins/podman"
)

// TestImageCLI: wai image rejects an unknown purpose naming the purposes,
// lists one row per purpose with its recipe hash and status, and, when
// the python image of the current recipe exists (plugins/podman's end to
// end test builds it), `wai image build python` is a cache hit.
func TestImageCLI(t *testing.T) {
	t.Parallel()
	config, _, _ := podmanAdminConfig(t)
	if r := inProcess(t, config, "image", "build", "cobol", "--config", config); r.code != exitError ||
		!strings.Contains(r.stderr, `unknown purpose "cobol"`) || !strings.Contains(r.stderr, "general, go, node, python, rust") {
		t.Errorf("wai image build cobol: want exit 2 naming the purposes; got %v", r)
	}
	if r := inProcess(t, config, "image", "--config", config, "frobnicate"); r.code != exitError || !strings.Contains(r.stderr, "build PURPOSE") {
		t.Errorf("wai image frobnicate: want a usage error; got %v", r)
	}
	r := inProcess(t, config, "image", "--config", config, "ls")
	rows := ""
	for _, l := range strings.Split(r.stdout, "\n") {
		rows += strings.Join(strings.Fields(l), "\x00") + "\n"
	}
	if r.code != exitOK {
		if os.Getenv("CI") != "true" && strings.Contains(r.stderr, "does not answer") {
			t.Skipf("no Podman service (run scripts/setup-podman.sh as root): %v", r)
		}
		t.Fatalf("wai image ls: %v", r)
	}
	for _, p := range podman.Purposes() {
		rec, err := podman.PurposeRecipe(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.stdout, rec.ImageName()) && !strings.Contains(r.stdout, rec.Hash()) {
			t.Errorf("wai image ls lacks %s (recipe %s):\n%s", p, rec.Hash(), r.stdout)
		}
	}
	py, _ := podman.PurposeRecipe("python")
	if !strings.Contains(rows, strings.Join([]string{"python", py.ImageName(), py.Hash(), "current"}, "\x00")) {
		t.Logf("python image %s not built yet; skipping the cache-hit check:\n%s", py.ImageName(), r.stdout)
		return
	}
	b := inProcess(t, config, "image", "build", "python", "--config", config)
	if b.code != exitOK || strings.TrimSpace(b.stdout) != py.ImageName() || !strings.Contains(b.stderr, "cached") ||
		strings.Contains(b.stderr, "bootstrap") {
		t.Errorf("wai image build python with the image present: want a cache hit printing %s; got %v", py.ImageName(), b)
	}
}
