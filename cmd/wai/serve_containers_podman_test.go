//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wai-dev/wai/host/backend"
)

// The done-when, through wai serve over MCP stdio with the
// official Go SDK client: create a container from the local image with an
// env var passed through by pattern and git config forwarded, use it, copy
// in and out, list, destroy; host network and an /etc mount are denied
// with their reasons; the session's containers go with the MCP session
// unless persistent.
func TestServeContainersPodman(t *testing.T) {
	t.Parallel()
	podmanServes(t, newEnv(t, "").config, "--backend", "podman")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// wai-agent runs the background jobs, given by agent_path as bin/wai
	// carries it.
	agent := agentBinary(t)
	home, roots := t.TempDir(), t.TempDir()
	writeFile(t, home, ".gitconfig", "[user]\n\tname = Ada Container\n\temail = ada@example.com\n")
	writeFile(t, roots, "from-host.txt", "hello from the host\n")
	id := testID(t)
	// The operator lets auto pass FOO_* and *_TOKEN; wai serve's own
	// tokens (WAI_MCP_TOKEN, and the variable [mcp] token_env names)
	// match *_TOKEN and still never reach a container.
	table := podmanTable("wai-mcp-"+id, roots) + fmt.Sprintf("agent_path = %q\n", agent) +
		"[backends.podman.containers]\nenv_patterns = [\"FOO_*\", \"*_TOKEN\"]\n[mcp]\ntoken_env = \"SERVE_BEARER_TOKEN\"\n"
	s := serveContainers(t, ctx, table, "containers-test", "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "FOO_API_KEY=sk-test-4242", "OTHER_API_KEY=sk-not-listed",
		"WAI_MCP_TOKEN=wai-own-bearer-1234", "SERVE_BEARER_TOKEN=serve-bearer-5678", "PROJECT_TOKEN=project-token-90")
	b, call, mustOK := s.backend, s.call, s.mustOK
	name, kept, temp, restored, snap := "wai-c-"+id, "wai-keep-"+id, "wai-temp-"+id, "wai-r-"+id, "snap-"+id
	t.Cleanup(func() {
		for _, n := range []string{name, kept, temp, restored} {
			_, _ = b.DestroyContainer(context.Background(), backend.ContainerRef{Name: n}, true)
		}
		_, _ = b.DeleteSnapshot(context.Background(), backend.ContainerOwner{}, snap)
	})
	// The python profile: its purpose image (built from Debian packages by
	// the setup script, no registry) and a venv; pytest runs in it.
	if out := mustOK(map[string]any{"operation": "create", "name": name, "forward_git": true, "purpose": "python"}); !strings.Contains(out, "Profile python") {
		t.Errorf("create with purpose python: %s", out)
	}
	if out := mustOK(map[string]any{"operation": "exec", "container": name, "command": `mkdir -p /tmp/t && printf 'def test_sum():\n    assert 1 + 1 == 2\n' > /tmp/t/test_sum.py && cd /tmp/t && "$HOME/.venv/bin/python" -m pytest -q`}); !strings.Contains(out, "1 passed") {
		t.Errorf("pytest in the python container: %s", out)
	}
	if out := mustOK(map[string]any{"operation": "exec", "container": name, "command": "git config user.name"}); !strings.Contains(out, "Ada Container") {
		t.Errorf("git config user.name: %s", out)
	}
	if out := mustOK(map[string]any{"operation": "exec", "container": name, "command": "echo $FOO_API_KEY"}); !strings.Contains(out, "sk-test-4242") {
		t.Errorf("echo $FOO_API_KEY: %s", out)
	}
	checkSecretsAndNetwork(t, call, mustOK, name)
	// In from an allowed host root, out to the session workspace (mounted
	// at /workspace), and back in from there.
	mustOK(map[string]any{"operation": "copy_in", "container": name, "host_path": filepath.Join(roots, "from-host.txt"), "container_path": "/tmp/in.txt"})
	mustOK(map[string]any{"operation": "exec", "container": name, "command": "tr a-z A-Z < /tmp/in.txt > /tmp/out.txt"})
	mustOK(map[string]any{"operation": "copy_out", "container": name, "container_path": "/tmp/out.txt", "host_path": "out.txt"})
	if out := mustOK(map[string]any{"operation": "exec", "container": name, "command": "cat /workspace/out.txt"}); !strings.Contains(out, "HELLO FROM THE HOST") {
		t.Errorf("the copied-out file in the workspace: %s", out)
	}
	if out := mustOK(map[string]any{"operation": "list"}); !strings.Contains(out, name) || strings.Contains(out, "sk-test") {
		t.Errorf("list: %s", out)
	}
	// /etc needs a person's approval (sensitive), but the backend refuses
	// it outside allowed_host_roots anyway: its reason, not a question.
	for args, reason := range map[string]string{
		`{"operation":"create","network":"host"}`:                                             "allow_host_network",
		`{"operation":"create","mounts":[{"host_path":"/etc","container_path":"/host-etc"}]}`: "is not under allowed_host_roots",
	} {
		var m map[string]any
		_ = json.Unmarshal([]byte(args), &m)
		if out, ok := call(m); ok || !strings.Contains(out, reason) {
			t.Errorf("%s: ok=%v %q; want a failure naming %s", args, ok, out, reason)
		}
	}
	// An unknown operation: the schema's enum refuses it before the tool
	// runs, or the tool answers a failed result; either way it lists the
	// operations.
	res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: "containers", Arguments: map[string]any{"operation": "frobnicate"}})
	if err == nil && !res.IsError || err != nil && !strings.Contains(err.Error(), "copy_out") {
		t.Errorf("an unknown operation: %+v, %v; want a failure listing the operations", res, err)
	}
	if _, ok := call(map[string]any{"operation": "create", "name": "wai-x-" + id, "persistent": true, "mount_cwd": true}); ok {
		t.Errorf("a persistent container mounting the session's workspace was created")
	}
	jobID := backgroundJobToCompletion(t, mustOK, name)
	// A lost job id: status lists the container's jobs, and a wrong id
	// says so (job_list lists only the session's own).
	if out := mustOK(map[string]any{"operation": "status", "container": name}); !strings.Contains(out, jobID) {
		t.Errorf("status: %s; want its job %s listed", out, jobID)
	}
	if out, ok := call(map[string]any{"operation": "exec_poll", "container": name, "job_id": "1"}); ok || !strings.Contains(out, "status lists") || strings.Contains(out, "job_list") {
		t.Errorf("exec_poll of a bad id: ok=%v %s; want it to name status", ok, out)
	}
	// Snapshot, destroy, restore under a new name: the file is there, and
	// the API key comes from the host again, not from the snapshot.
	mustOK(map[string]any{"operation": "exec", "container": name, "command": "echo kept-in-snapshot > ~/state.txt"})
	if out := mustOK(map[string]any{"operation": "snapshot", "container": name, "snapshot": snap}); !strings.Contains(out, "FOO_API_KEY") || !strings.Contains(out, "were not saved") {
		t.Errorf("snapshot: %s; want a note that FOO_API_KEY's value was left out", out)
	}
	mustOK(map[string]any{"operation": "destroy", "container": name})
	if out, ok := call(map[string]any{"operation": "exec_poll", "container": name, "job_id": jobID}); ok || !strings.Contains(out, "no such managed container") {
		t.Errorf("polling a job of a destroyed container: ok=%v %s", ok, out)
	}
	if out := mustOK(map[string]any{"operation": "list"}); strings.Contains(out, name) {
		t.Errorf("list after destroy: %s", out)
	}
	if out := mustOK(map[string]any{"operation": "list_snapshots"}); !strings.Contains(out, snap) || !strings.Contains(out, name) {
		t.Errorf("list_snapshots: %s", out)
	}
	mustOK(map[string]any{"operation": "restore", "snapshot": snap, "name": restored, "network": "none"})
	if out := mustOK(map[string]any{"operation": "exec", "container": restored, "command": "cat ~/state.txt; echo key=$FOO_API_KEY"}); !strings.Contains(out, "kept-in-snapshot") || !strings.Contains(out, "key=sk-test-4242") {
		t.Errorf("in the restored container: %s", out)
	}
	if out, ok := call(map[string]any{"operation": "delete_snapshot", "snapshot": snap}); ok || !strings.Contains(out, "destroy it first") {
		t.Errorf("deleting a snapshot a container runs from: ok=%v %s", ok, out)
	}
	mustOK(map[string]any{"operation": "destroy", "container": restored})
	mustOK(map[string]any{"operation": "delete_snapshot", "snapshot": snap})
	mustOK(map[string]any{"operation": "create", "name": temp, "image": podmanImage(), "network": "none"})
	mustOK(map[string]any{"operation": "create", "name": kept, "image": podmanImage(), "network": "none", "persistent": true})
	s.end()
	ls, err := b.ListManagedContainers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range ls {
		names[c.Name] = true
	}
	if names[temp] || names[name] || !names[kept] {
		t.Errorf("after the MCP session ended: %v; want %s gone and persistent %s kept", names, temp, kept)
	}
	reconnected(t, s.reconnect("containers-reconnect"), kept)
}

// reconnected is a new MCP session finding the persistent container kept
// an earlier one made: list shows it, and stopped it keeps its files
// (exec says to start it, start brings it back as it was).
func reconnected(t *testing.T, s *containersServe, kept string) {
	t.Helper()
	defer s.end()
	if out := s.mustOK(map[string]any{"operation": "list"}); !strings.Contains(out, kept) || !strings.Contains(out, "from an earlier session") {
		t.Errorf("list after a reconnect: %s; want %s, from an earlier session", out, kept)
	}
	s.mustOK(map[string]any{"operation": "exec", "container": kept, "command": "echo still-here > ~/k.txt"})
	if out := s.mustOK(map[string]any{"operation": "stop", "container": kept}); !strings.Contains(out, "files are kept") {
		t.Errorf("stop: %s", out)
	}
	if out, ok := s.call(map[string]any{"operation": "exec", "container": kept, "command": "true"}); ok || !strings.Contains(out, "operation start") {
		t.Errorf("exec in the stopped container: ok=%v %s; want it to say start it", ok, out)
	}
	s.mustOK(map[string]any{"operation": "start", "container": kept})
	if out := s.mustOK(map[string]any{"operation": "exec", "container": kept, "command": "cat ~/k.txt"}); !strings.Contains(out, "still-here") {
		t.Errorf("after start: %s; want the file written before the stop", out)
	}
}

// checkSecretsAndNetwork checks container name (made with the default
// env_passthrough and network): it holds the operator's patterns' matches
// (PROJECT_TOKEN), not wai's own tokens nor unlisted keys, and has no
// network but loopback; egress and a list of names need a person, and
// nobody can be asked here.
func checkSecretsAndNetwork(t *testing.T, call func(map[string]any) (string, bool), mustOK func(map[string]any) string, name string) {
	t.Helper()
	out := mustOK(map[string]any{"operation": "exec", "container": name, "command": "env; ls /sys/class/net"})
	for _, secret := range []string{"wai-own-bearer-1234", "serve-bearer-5678", "sk-not-listed"} {
		if strings.Contains(out, secret) {
			t.Errorf("the container holds %s:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "project-token-90") || strings.Contains(out, "eth0") {
		t.Errorf("want PROJECT_TOKEN (the operator's *_TOKEN) and no network but lo:\n%s", out)
	}
	for _, c := range []struct {
		args map[string]any
		key  string
	}{
		{map[string]any{"operation": "create", "network": "bridge"}, "allow_network_egress"},
		{map[string]any{"operation": "create", "env_passthrough": []string{"WAI_MCP_TOKEN"}}, "allow_env_passthrough_list"},
		{map[string]any{"operation": "create", "forward_gh": true}, "allow_gh_forwarding"},
	} {
		if out, ok := call(c.args); ok || !strings.Contains(out, c.key) {
			t.Errorf("%v: ok=%v %s; want a refusal naming %s", c.args, ok, out, c.key)
		}
	}
}

// backgroundJobToCompletion starts a background job in the container and
// polls it over MCP until it ends, as an agent does; it returns the job's
// id.
func backgroundJobToCompletion(t *testing.T, mustOK func(map[string]any) string, container string) string {
	t.Helper()
	out := mustOK(map[string]any{"operation": "exec_background", "container": container,
		"command": "echo begin; sleep 1; echo finished; echo warn >&2; exit 4"})
	id := regexp.MustCompile(`j[0-9a-f]{12}`).FindString(out)
	if id == "" || !strings.Contains(out, "exec_poll") {
		t.Fatalf("exec_background: %s", out)
	}
	sawRunning := false
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		out = mustOK(map[string]any{"operation": "exec_poll", "container": container, "job_id": id})
		if !strings.Contains(out, "still running") {
			break
		}
		sawRunning = true
		if !strings.Contains(out, "Poll again later") || time.Now().After(deadline) {
			t.Fatalf("exec_poll: %s", out)
		}
	}
	if !strings.Contains(out, "ended with exit code 4") || !strings.Contains(out, "begin\nfinished") || !strings.Contains(out, "warn") {
		t.Errorf("exec_poll after completion: %s", out)
	}
	t.Logf("background job %s polled to completion (seen running: %v)", id, sawRunning)
	return id
}
