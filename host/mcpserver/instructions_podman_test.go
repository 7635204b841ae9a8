//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package mcpserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/mcpserver"
	"github.com/wai-dev/wai/internal/plugbuild"
	_ "github.com/wai-dev/wai/plugins/podman"
)

// A kernel on the real podman backend gives the "Podman Workspace"
// instructions with its mount table, and tool descriptions that say
// commands run in a container without network.
func TestServerInstructionsOnPodman(t *testing.T) {
	data := t.TempDir()
	cfg := host.DefaultConfig() // podman
	cfg.StateDir = plugbuild.StateDir(t)
	cfg.BundledTools = []string{}
	noop := filepath.Join(t.TempDir(), "noop.wasm")
	if err := os.WriteFile(noop, plugbuild.Build(t, "host/testdata/noop"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Plugins = []host.PluginConfig{{Path: noop, Grants: []string{"shell"}}}
	cfg.Backends["podman"] = map[string]any{
		"name_prefix":        "wai-instr-test",
		"allowed_host_roots": []any{data},
		"host_mounts":        []any{map[string]any{"host_path": data, "mount_path": "data"}},
		"tmpfs_size":         "48m",
		"idle_timeout":       "9m",
	}
	ctx := context.Background()
	k, err := host.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(ctx)
	if _, err := k.Info(ctx); errors.Is(err, backend.ErrUnavailable) && os.Getenv("CI") != "true" {
		t.Skipf("no Podman here: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	s := serve(t, k, mcpserver.Options{})
	cs := stdioClient(t, s, nil)
	got := cs.InitializeResult().Instructions
	for _, want := range []string{"Podman Workspace", "No network access", "≤120 seconds", "| " + data + " | /workspace/data | copied |",
		"`/tmp` is writable too (48 MiB)", "removed after 9 min without a command", "`$HOME` is not writable"} {
		if !strings.Contains(got, want) {
			t.Errorf("instructions lack %q:\n%s", want, got)
		}
	}
	writableIsTrue(t, k)
	// The workspace prompt renders the same, mount table included.
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "workspace"})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := pr.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "| "+data+" | /workspace/data | copied |") {
		t.Errorf("the workspace prompt lacks the mount table: %+v", pr.Messages[0].Content)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range lt.Tools {
		if !strings.Contains(tool.Description, "isolated Podman container") || !strings.Contains(tool.Description, "no network") {
			t.Errorf("%s: %q", tool.Name, tool.Description)
		}
	}
}

// writableIsTrue checks in the container what the instructions promise:
// /tmp takes a file and has the configured size; $HOME and the rest of the
// root take none.
func writableIsTrue(t *testing.T, k *host.Kernel) {
	t.Helper()
	s, err := k.Session(t.Context(), "instr-writable", host.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	res, err := s.Shell().Execute(t.Context(), backend.ExecRequest{Argv: []string{"sh", "-c",
		`touch /tmp/w && echo tmp-ok; df -k /tmp | tail -1; touch "$HOME/w" 2>/dev/null || echo home-ro; touch /w 2>/dev/null || echo root-ro`}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tmp-ok", " 49152 ", "home-ro", "root-ro"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("the container does not bear out the instructions (%q missing): %q %q", want, res.Stdout, res.Stderr)
		}
	}
}
