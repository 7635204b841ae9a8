//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// wai containers net and compose for a person: what they make outlives
// the command (persistent), and goes with net rm and compose down.
func TestContainersNetComposeCLIPodman(t *testing.T) {
	t.Parallel()
	c := newCLITest(t, "", "")
	id, roots, wai := c.id, c.roots, c.wai
	net, project := "cnet-"+id, "c"+id
	t.Cleanup(func() {
		wai("compose", "down", "--force", project)
		wai("net", "rm", net)
	})
	if r := wai("net", "create", net); r.code != 0 || !strings.Contains(r.stdout, "created network "+net) {
		t.Fatalf("net create: %+v", r)
	}
	if r := wai("net", "ls"); r.code != 0 || !strings.Contains(r.stdout, net) {
		t.Errorf("net ls: %+v", r)
	}
	if r := wai("net", "bogus"); r.code == 0 || !strings.Contains(r.stderr, "usage") {
		t.Errorf("net bogus: %+v", r)
	}
	writeFile(t, roots, "compose.yaml", fmt.Sprintf("services:\n  a:\n    image: %s\n  b:\n    image: %s\n    depends_on: [a]\n", podmanImage(), podmanImage()))
	if r := wai("compose", "up", filepath.Join(roots, "compose.yaml"), "--project", project); r.code != 0 || !strings.Contains(r.stdout, project+"-b") {
		t.Fatalf("compose up: %+v", r)
	}
	// A command later: the project is still there, and a reaches b by name.
	if r := wai("exec", project+"-a", "--", "getent hosts b >/dev/null && echo found"); r.code != 0 || r.stdout != "found\n" {
		t.Errorf("a resolving b: %+v", r)
	}
	if r := wai("compose", "ps", project); r.code != 0 || strings.Count(r.stdout, "running") != 2 {
		t.Errorf("compose ps: %+v", r)
	}
	if r := wai("compose", "down", "--force", project); r.code != 0 || !strings.Contains(r.stdout, "removed project "+project) {
		t.Errorf("compose down: %+v", r)
	}
	if r := wai("net", "rm", net); r.code != 0 || !strings.Contains(r.stdout, "removed network "+net) {
		t.Errorf("net rm: %+v", r)
	}
	if r := wai("net", "ls"); r.code != 0 || strings.Contains(r.stdout, id) {
		t.Errorf("net ls after rm: %+v", r)
	}
}
