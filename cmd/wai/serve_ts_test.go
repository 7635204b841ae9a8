package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tsClient runs tests/mcp-ts/client.mjs, the official MCP TypeScript SDK
// driving `bin serve args…` over stdio, and returns what it saw. Without
// node or npm it skips on a developer machine and fails under CI=true.
func tsClient(t *testing.T, e *env, bin string, args ...string) (tools []string, read, uid string) {
	t.Helper()
	out := tsScript(t, e, "client.mjs", append([]string{bin}, args...)...)
	var got struct {
		Tools []string `json:"tools"`
		Read  string   `json:"read"`
		UID   string   `json:"uid"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	return got.Tools, got.Read, got.UID
}

// tsScript runs script of tests/mcp-ts with node, in e's directories and
// environment (node in wai's place), and returns its standard output.
// Without node or npm it skips on a developer machine and fails under
// CI=true.
func tsScript(t *testing.T, e *env, script string, args ...string) []byte {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed; the TypeScript SDK client test needs Node.js and npm", tool)
			}
			t.Skipf("%s is not installed: skipping the TypeScript SDK client test (CI=true makes this a failure)", tool)
		}
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "tests", "mcp-ts"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// Idempotent: installs the locked versions once, then returns at once.
	if out, err := exec.CommandContext(ctx, "bash", filepath.Join(dir, "install.sh")).CombinedOutput(); err != nil {
		t.Fatalf("installing the TypeScript SDK (tests/mcp-ts/install.sh): %v\n%s", err, out)
	}
	cmd := e.command(ctx)
	cmd.Path, cmd.Args = mustLook(t, "node"), append([]string{"node", filepath.Join(dir, script)}, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript SDK client failed: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	return out
}

func mustLook(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A client nobody here wrote lists wai's tools and uses read_file and
// shell_execute, on the host backend.
func TestServeTypeScriptClient(t *testing.T) {
	t.Parallel()
	e, _ := toolsEnv(t, "shell", "vfs")
	tools, read, _ := tsClient(t, e, waiBinary(t), "--config", e.config)
	joined := strings.Join(tools, " ")
	for _, want := range []string{"shell_execute", "read_file", "write_file", "edit_file"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the TypeScript client did not see %s in %s", want, joined)
		}
	}
	if !strings.Contains(read, "hi from ts") {
		t.Errorf("read_file through the TypeScript client: %q", read)
	}
}
