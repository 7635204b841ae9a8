//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/mcpserver/mcptest"
	"github.com/wai-dev/wai/internal/plugbuild"
	"github.com/wai-dev/wai/plugins/podman"
)

// The harness of the containers tests on Podman: the CLI ones run
// `wai containers` in-process against a config; the MCP ones run the
// containers tool in a wai serve built with the Podman backend.

// podmanServes runs `wai exec ARGS -- true` on config: without a Podman
// service that can serve, the test is skipped, and fails on CI.
func podmanServes(t *testing.T, config string, args ...string) {
	t.Helper()
	r := inProcess(t, config, append(append([]string{"exec"}, args...), "--", "true")...)
	if r.code == exitError && strings.Contains(r.stderr, "hint: the backend cannot serve") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Podman is required on CI: %v", r)
		}
		t.Skipf("no usable Podman service (run scripts/setup-podman.sh as root): %s", r.stderr)
	}
}

// containersCLI returns a runner of `wai containers SUB --config config
// ARGS` in-process, after podmanServes.
func containersCLI(t *testing.T, config string) func(args ...string) result {
	t.Helper()
	podmanServes(t, config)
	return func(args ...string) result {
		t.Helper()
		return inProcess(t, config, append([]string{"containers", args[0], "--config", config}, args[1:]...)...)
	}
}

// removeAtEnd removes the managed container name with `wai containers rm
// --force` when t ends, and fails t if that fails: a container left
// running outlives every test run after it. One the test removed itself
// (or never made) is no failure.
func removeAtEnd(t *testing.T, wai func(args ...string) result, name string) {
	t.Helper()
	t.Cleanup(func() {
		if r := wai("rm", "--force", name); r.code != 0 && !strings.Contains(r.stderr, "no such managed container") {
			t.Errorf("removing %s at the end: %+v", name, r)
		}
	})
}

// cliTest is a CLI containers test's setup: its id, a host root of its
// own (the one allowed), its config and a runner as containersCLI's.
type cliTest struct {
	id, roots, config string
	wai               func(args ...string) result
}

// newCLITest writes a config of the test's own: top (settings, other
// tables), then [backends.podman] with names prefixed wai-cli-ID, roots
// the allowed host root, and extra.
func newCLITest(t *testing.T, top, extra string) cliTest {
	t.Helper()
	c := cliTest{id: testID(t), roots: t.TempDir()}
	c.config = writePodmanConfig(t, plugbuild.StateDir(t), top, podmanTable("wai-cli-"+c.id, c.roots)+extra)
	c.wai = containersCLI(t, c.config)
	return c
}

// testID is the test's marker cut to eight characters, for names.
func testID(t *testing.T) string {
	return marker(t)[len("wai-test-"):][:8]
}

// writePodmanConfig writes a wai.toml with the Podman backend on state:
// the lines top (settings, other tables) before [backends.podman]
// holding table. It returns the file's path.
func writePodmanConfig(t *testing.T, state, top, table string) string {
	t.Helper()
	config := filepath.Join(t.TempDir(), "wai.toml")
	writeFile(t, filepath.Dir(config), "wai.toml", fmt.Sprintf("backend = \"podman\"\nstate_dir = %q\n%s\n[backends.podman]\n%s", state, top, table))
	return config
}

// podmanTable is a [backends.podman] table with the test image, names
// prefixed with prefix and, unless roots is "", roots the one allowed
// host root.
func podmanTable(prefix, roots string) string {
	table := fmt.Sprintf("image = %q\nname_prefix = %q\n", podmanImage(), prefix)
	if roots != "" {
		table += fmt.Sprintf("allowed_host_roots = [%q]\n", roots)
	}
	return table
}

// containersServe is a wai serve (Podman backend, containers tool only)
// with an MCP client connected over stdio.
type containersServe struct {
	t      *testing.T
	ctx    context.Context
	config string
	// backend is the same Podman backend opened from outside, to look at
	// and clean up what the agent made.
	backend *podman.Backend
	session *mcp.ClientSession
	cmd     *exec.Cmd
}

var agentBin builtOnce

// agentBinary builds wai-agent as bin/wai carries it (static, for the
// containers), once per test run: the tests that give it by agent_path
// share one build.
func agentBinary(t *testing.T) string {
	t.Helper()
	return agentBin.get(t, func(dir string) (string, error) {
		agent := filepath.Join(dir, "wai-agent")
		build := exec.Command("go", "build", "-trimpath", "-o", agent, "../wai-agent")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return "", fmt.Errorf("building wai-agent: %v\n%s", err, out)
		}
		return agent, nil
	})
}

// serveContainers starts wai with the Podman backend (the tests' shared
// build), writes a config serving the containers tool with the [backends.podman] table, starts
// wai serve with env added to the test's and connects client to it.
func serveContainers(t *testing.T, ctx context.Context, table, client string, env ...string) *containersServe {
	t.Helper()
	bin := buildWithBundled(t) // the plugin_dir's containers.wasm is what the config names
	plugins, state := t.TempDir(), plugbuild.StateDir(t)
	if err := os.WriteFile(filepath.Join(plugins, "containers.wasm"), plugbuild.Build(t, "tools/containers"), 0o644); err != nil {
		t.Fatal(err)
	}
	config := writePodmanConfig(t, state, fmt.Sprintf("plugin_dir = %q\nbundled_tools = [\"containers\"]\npolicy_timeout = \"30s\"\n", plugins), table)
	s := &containersServe{t: t, ctx: ctx, config: config, backend: managedBackend(t, state, table)}
	s.connect(bin, client, env)
	return s
}

// connect starts wai serve on s's config and connects client to it.
func (s *containersServe) connect(bin, client string, env []string) {
	s.cmd = exec.CommandContext(s.ctx, bin, "serve", "--config", s.config)
	if len(env) > 0 {
		s.cmd.Env = append(os.Environ(), env...)
	}
	s.session = mcptest.ConnectCommand(s.t, s.ctx, client, s.cmd)
}

// reconnect is a model coming back after s ended: a new wai serve on the
// same config, a new MCP session.
func (s *containersServe) reconnect(client string, env ...string) *containersServe {
	r := &containersServe{t: s.t, ctx: s.ctx, config: s.config, backend: s.backend}
	r.connect(s.cmd.Path, client, env)
	return r
}

// call runs the containers tool with args: its text, and whether it
// succeeded.
func (s *containersServe) call(args map[string]any) (string, bool) {
	s.t.Helper()
	res, err := s.session.CallTool(s.ctx, &mcp.CallToolParams{Name: "containers", Arguments: args})
	if err != nil {
		s.t.Fatalf("containers %v: %v", args["operation"], err)
	}
	var sb strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String(), !res.IsError
}

// mustOK is call that fails the test when the tool fails.
func (s *containersServe) mustOK(args map[string]any) string {
	s.t.Helper()
	out, ok := s.call(args)
	if !ok {
		s.t.Fatalf("containers %v failed: %s", args["operation"], out)
	}
	return out
}

// end closes the client, which ends the MCP session, and waits for wai
// serve to exit.
func (s *containersServe) end() {
	if err := s.session.Close(); err != nil {
		s.t.Logf("closing the client: %v", err)
	}
	_ = s.cmd.Wait()
}

// managedBackend opens a podman backend on the test's state, to look at
// and clean up the managed containers from outside wai serve.
func managedBackend(t *testing.T, state, table string) *podman.Backend {
	t.Helper()
	m := map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		if strings.HasPrefix(line, "[") {
			break // the tables after [backends.podman]'s keys: not needed to look and clean up
		}
		k, v, _ := strings.Cut(line, " = ")
		var val any
		if err := json.Unmarshal([]byte(v), &val); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		m[k] = val
	}
	raw, _ := json.Marshal(m)
	b, err := podman.New(context.Background(), backend.Options{Config: raw, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	return b
}
