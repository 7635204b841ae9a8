//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

// The podman backend, the only one with containers, is linked by
// instructions_podman_test.go under the same tags.

package mcpserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/mcpserver"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// containersAskServer serves the containers tool plugin under the bundled
// container_safety policy on the podman backend (the only one with the
// Containers capability; the kernel checks it before the policy).
func containersAskServer(t *testing.T) *mcpserver.Server {
	t.Helper()
	dir := t.TempDir()
	tool := filepath.Join(dir, "containers.wasm")
	if err := os.WriteFile(tool, plugbuild.Build(t, "tools/containers"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := host.DefaultConfig()
	cfg.Backend = "podman"
	cfg.BundledTools = []string{}
	cfg.DefaultPolicies = []string{"container_safety"}
	cfg.Plugins = []host.PluginConfig{{Path: tool, Grants: []string{"containers"}}}
	cfg.PolicyTimeout = 30 * time.Second
	cfg.StateDir = plugbuild.StateDir(t)
	k, err := host.New(context.Background(), cfg)
	if err != nil && errors.Is(err, backend.ErrUnavailable) && os.Getenv("CI") != "true" {
		t.Skipf("podman is not reachable (CI=true fails here): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close(context.Background()) })
	s, err := mcpserver.New(k, mcpserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// destroy_all needs a person's approval: the question is put through
// elicitation; declined, it is refused with the reason; accepted, it goes
// on to the backend, which finds no containers of the session to destroy.
func TestAskContainersDestroyAll(t *testing.T) {
	var p person
	cs := stdioClient(t, containersAskServer(t), &mcp.ClientOptions{ElicitationHandler: p.handle})
	args := map[string]any{"operation": "destroy_all", "confirm": true}

	p.set("decline", "")
	res := call(t, cs, "containers", args)
	if !res.IsError || !strings.Contains(text(res), "the person declined") || !strings.Contains(text(res), "destroy_all") {
		t.Errorf("declined: want a refusal with the reason; got %q", text(res))
	}
	if p.times() != 1 || !strings.Contains(p.asked[0], "container_safety") || !strings.Contains(p.asked[0], "destroy_all") {
		t.Fatalf("the question (asked %d times): %q", p.times(), p.asked)
	}

	p.set("accept", "allow once")
	res = call(t, cs, "containers", args)
	if p.times() != 2 || strings.Contains(text(res), "declined") || strings.Contains(text(res), "denied by policy") {
		t.Errorf("approved once: asked %d times, got %q", p.times(), text(res))
	}
	if res.IsError {
		t.Errorf("approved once: want destroy_all done; got %q", text(res))
	}
}

// A create the backend refuses by its own rules is refused with its
// reason before anyone is asked: approving it could change nothing. The
// default backend has egress off and no allowed_host_roots.
func TestAskContainersBackendRefusesFirst(t *testing.T) {
	var p person
	cs := stdioClient(t, containersAskServer(t), &mcp.ClientOptions{ElicitationHandler: p.handle})
	p.set("accept", "allow once")
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"operation": "create", "network": "bridge"}, "allow_network_egress = true in [backends.podman]"},
		{map[string]any{"operation": "create", "mounts": []map[string]any{{"host_path": "/etc", "container_path": "/host-etc"}}}, "allowed_host_roots"},
	} {
		res := call(t, cs, "containers", c.args)
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%v: %q; want the backend's refusal naming %s", c.args, text(res), c.want)
		}
	}
	if p.times() != 0 {
		t.Errorf("the person was asked %d times about creates the backend refuses: %q", p.times(), p.asked)
	}
}
