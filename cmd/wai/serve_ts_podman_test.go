//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	hostconfig "github.com/wai-dev/wai/host/config"
	"github.com/wai-dev/wai/plugins/podman"
)

// The done-when: the TypeScript SDK client lists wai's tools and
// runs a command in a Podman sandbox (as the container's nobody user).
func TestServeTypeScriptClientPodman(t *testing.T) {
	t.Parallel()
	e, _ := toolsEnv(t, "shell", "vfs")
	r := inProcess(t, e.config, "exec", "--backend", "podman", "--", "true")
	if r.code == exitError && strings.Contains(r.stderr, "hint: the backend cannot serve") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Podman is required on CI (make test runs scripts/setup-podman.sh first): %v", r)
		}
		t.Skipf("no usable Podman service (run scripts/setup-podman.sh as root): %s", r.stderr)
	}

	// The binary `make build` makes (Podman tags, plugins built in); the
	// config's plugin_dir still decides which plugins load.
	bin := buildWithBundled(t)

	prefix := "wai-ts-" + marker(t)[len("wai-test-"):][:8]
	extra := fmt.Sprintf("\n[backends.podman]\nimage = %q\nname_prefix = %q\n", podmanImage(), prefix)
	f, err := os.OpenFile(e.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(extra); err != nil {
		t.Fatal(err)
	}
	f.Close()

	tools, read, uid := tsClient(t, e, bin, "--config", e.config, "--backend", "podman")
	if !strings.Contains(strings.Join(tools, " "), "shell_execute") {
		t.Errorf("tools: %v", tools)
	}
	if !strings.Contains(read, "hi from ts") {
		t.Errorf("read_file: %q", read)
	}
	if uid != "65534" {
		t.Errorf("shell_execute id -u ran as %q, want 65534 (the container's nobody): not in the Podman sandbox", uid)
	}

	// The client has gone, and with it its MCP session: the wai session's
	// container must be gone too, not left for gc.
	cfg, err := hostconfig.Load(e.config)
	if err != nil {
		t.Fatal(err)
	}
	lctx, lcancel := context.WithTimeout(context.Background(), time.Minute)
	defer lcancel()
	cs, err := podman.List(lctx, podmanConfig(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if strings.HasPrefix(c.Name, prefix+"-") {
			t.Errorf("container %s (session %s, %s) outlived the MCP client's session; removing it", c.Name, c.Session, c.State)
			_ = exec.CommandContext(lctx, "podman", "rm", "-f", c.Name).Run()
		}
	}
}
