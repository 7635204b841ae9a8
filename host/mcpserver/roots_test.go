//lint:file-ignore SA1019 MCP logging and roots are deprecated as of protocol 2026-07-28 (SEP-2577) but functional for at least twelve months; wai serves clients of 2025-11-25, which use them (RATIONALE.md).

package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host/mcpserver"
	"github.com/wai-dev/wai/internal/filetree"
)

// With mcp.client_roots set, a client's root under it is copied into the
// workspace when its session opens (symlinks left out), the model is told
// where, a root elsewhere is not copied, and changes to the copy never
// reach the host.
func TestClientRootsCopiedIn(t *testing.T) {
	allowed, elsewhere := t.TempDir(), t.TempDir()
	proj := filepath.Join(allowed, "proj")
	filetree.Write(t, proj, map[string]string{"a.txt": "from the host\n", "sub/b.txt": "deep\n"})
	if err := os.Symlink("/etc/hostname", filepath.Join(proj, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "secret.txt"), []byte("no"), 0o644); err != nil {
		t.Fatal(err)
	}

	s := serve(t, startKernel(t, hostConfig(t, noopPlugin)), mcpserver.Options{ClientRoots: []string{allowed}})

	c := mcp.NewClient(&mcp.Implementation{Name: "roots", Version: "1"}, nil)
	c.AddRoots(&mcp.Root{URI: "file://" + proj, Name: "proj"}, &mcp.Root{URI: "file://" + elsewhere, Name: "elsewhere"})
	cs := connectClient(t, s, c)

	res := call(t, cs, "run", map[string]any{"shell": "cat roots/proj/a.txt roots/proj/sub/b.txt; ls roots; test -e roots/proj/link || echo no-link"})
	out := fullText(res)
	if !strings.Contains(out, "from the host\ndeep\nproj\nno-link") {
		t.Errorf("the copy: want both files, only proj, no symlink; got %q", out)
	}
	if !strings.Contains(out, proj+" → roots/proj (2 files)") || !strings.Contains(out, "never reach the host") {
		t.Errorf("the model is not told where the roots are: %q", out)
	}
	call(t, cs, "run", map[string]any{"shell": "echo changed > roots/proj/a.txt"})
	if b, _ := os.ReadFile(filepath.Join(proj, "a.txt")); string(b) != "from the host\n" {
		t.Errorf("a change in the workspace reached the host: %q", b)
	}
	res = call(t, cs, "run", map[string]any{"shell": "ls roots"})
	if strings.Contains(fullText(res), "wai: the client's roots") {
		t.Errorf("the roots note repeats on later calls: %q", fullText(res))
	}
}
