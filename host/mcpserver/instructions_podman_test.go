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
	for _, want := range []string{"Podman Workspace", "No network access", "≤120 seconds", "| " + data + " | /workspace/data | copied |"} {
		if !strings.Contains(got, want) {
			t.Errorf("instructions lack %q:\n%s", want, got)
		}
	}
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
