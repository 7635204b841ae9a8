//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// fetchScript fetches http://HOST:PORT/ (retrying while the server
// starts), then tries the outside; the output says what worked.
const fetchScript = `python3 - <<'EOF'
import socket, time, urllib.request
for i in range(50):
    try:
        print("fetched", urllib.request.urlopen("http://%s/", timeout=2).status)
        break
    except Exception as e:
        err = e
        time.sleep(0.2)
else:
    print("fetch failed", err)
try:
    socket.create_connection(("1.1.1.1", 80), timeout=5)
    print("egress open")
except OSError:
    print("egress closed")
EOF`

// The done-when of networks and compose, over MCP stdio: an agent makes a
// network, starts a server and a client on it that talk by name (and not
// to the outside), cannot destroy the network while in use, runs a
// two-service compose file (a privileged one is refused), checks its
// status, takes it down, and tears everything down; a network left over
// goes with the MCP session.
func TestServeNetworksComposePodman(t *testing.T) {
	t.Parallel()
	podmanServes(t, newEnv(t, "").config, "--backend", "podman")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	roots := t.TempDir()
	id := testID(t)
	img := podmanImage()
	writeFile(t, roots, "compose.yaml", fmt.Sprintf("services:\n  client:\n    image: %s\n    depends_on: [web]\n"+
		"  web:\n    image: %s\n    command: python3 -m http.server 8000\n    environment:\n      GREETING: hi\n", img, img))
	writeFile(t, roots, "bad.yaml", fmt.Sprintf("services:\n  web:\n    image: %s\n    privileged: true\n", img))
	s := serveContainers(t, ctx, podmanTable("wai-mcp-"+id, roots), "networks-test")
	b, config, call, mustOK := s.backend, s.config, s.call, s.mustOK
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer ccancel()
		_, _ = b.DestroyContainers(cctx, backend.ContainerOwner{}, false)
		_, _ = b.DestroyNetworks(cctx, backend.ContainerOwner{}, false)
	})
	net, srv, cli := "net-"+id, "srv-"+id, "cli-"+id
	if out := mustOK(map[string]any{"operation": "create_network", "name": net}); !strings.Contains(out, "internal") {
		t.Errorf("create_network: %s", out)
	}
	if out, ok := call(map[string]any{"operation": "create_network", "name": "egress-" + id, "egress": true}); ok || !strings.Contains(out, "allow_network_egress") {
		t.Errorf("a network with egress: ok=%v %s; want a failure naming allow_network_egress", ok, out)
	}
	mustOK(map[string]any{"operation": "create", "name": srv, "network": net, "mount_cwd": false})
	mustOK(map[string]any{"operation": "exec", "container": srv, "command": "nohup python3 -m http.server 8080 >/dev/null 2>&1 &"})
	mustOK(map[string]any{"operation": "create", "name": cli, "network": net, "mount_cwd": false})
	out := mustOK(map[string]any{"operation": "exec", "container": cli, "command": strings.Replace(fetchScript, "%s", srv+":8080", 1)})
	if !strings.Contains(out, "fetched 200") || !strings.Contains(out, "egress closed") {
		t.Errorf("the client on %s: %s; want fetched 200 from %s by name, and egress closed", net, out, srv)
	}
	if out, ok := call(map[string]any{"operation": "destroy_network", "network": net}); ok || !strings.Contains(out, "in use by") {
		t.Errorf("destroy_network in use: ok=%v %s", ok, out)
	}

	if out, ok := call(map[string]any{"operation": "compose_up", "file": filepath.Join(roots, "bad.yaml")}); ok || !strings.Contains(out, "privileged") {
		t.Errorf("compose_up of a privileged service: ok=%v %s", ok, out)
	}
	project := "p" + id
	if out := mustOK(map[string]any{"operation": "compose_up", "file": filepath.Join(roots, "compose.yaml"), "project": project}); !strings.Contains(out, project+"-web") {
		t.Errorf("compose_up: %s", out)
	}
	out = mustOK(map[string]any{"operation": "exec", "container": project + "-client", "command": strings.Replace(fetchScript, "%s", "web:8000", 1)})
	if !strings.Contains(out, "fetched 200") {
		t.Errorf("client to web by service name: %s", out)
	}
	if out := mustOK(map[string]any{"operation": "compose_status", "project": project}); strings.Count(out, "running") != 2 {
		t.Errorf("compose_status: %s; want two running services", out)
	}
	if out := mustOK(map[string]any{"operation": "compose_down", "project": project, "force": true}); strings.Contains(out, "running") || !strings.Contains(out, "removed") {
		t.Errorf("compose_down: %s; want it removed, nothing said to run", out)
	}
	if out, ok := call(map[string]any{"operation": "compose_status", "project": project}); ok {
		t.Errorf("compose_status after down: %s", out)
	}

	mustOK(map[string]any{"operation": "destroy", "container": srv, "force": true})
	mustOK(map[string]any{"operation": "destroy", "container": cli, "force": true})
	mustOK(map[string]any{"operation": "destroy_network", "network": net})
	if out := mustOK(map[string]any{"operation": "list_networks"}); !strings.Contains(out, "No networks") {
		t.Errorf("list_networks after teardown: %s", out)
	}
	mustOK(map[string]any{"operation": "create_network", "name": "left-" + id})
	mustOK(map[string]any{"operation": "create_network", "name": "keep-" + id, "persistent": true})
	s.end()
	if ls, err := b.ListNetworks(ctx, backend.ContainerOwner{}); err != nil || len(ls) != 1 || ls[0].Name != "keep-"+id {
		t.Errorf("networks after the MCP session ended: %+v, %v; want only the persistent keep-%s", ls, err, id)
	}
	// wai ps lists the persistent network, wai rm removes it.
	if r := inProcess(t, config, "ps", "--config", config); r.code != 0 || !strings.Contains(r.stdout, "network/keep-"+id) {
		t.Errorf("wai ps: %+v", r)
	}
	if r := inProcess(t, config, "rm", "--config", config, "network/keep-"+id); r.code != 0 {
		t.Errorf("wai rm network/keep-%s: %+v", id, r)
	}
	if ls, err := b.ListNetworks(ctx, backend.ContainerOwner{}); err != nil || len(ls) != 0 {
		t.Errorf("networks after wai rm: %+v, %v; want none", ls, err)
	}
}
