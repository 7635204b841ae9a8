package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// The whole-program embedding example runs as documented (the README's
// snippet is host's Example, checked in host/example_test.go).
func TestEmbed(t *testing.T) {
	cfg := host.DefaultConfig()
	cfg.Backend = "host"
	cfg.BundledTools = nil
	cfg.StateDir = t.TempDir()
	var out strings.Builder
	if err := run(context.Background(), &out, cfg, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"exit 0: hello from the workspace\n", "refused: ", "blocklist"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// With -http, the embedded kernel serves MCP clients its tools on the
// address it prints, until its context ends.
func TestEmbedServesMCP(t *testing.T) {
	plugins := t.TempDir()
	for _, pkg := range []string{"tools/shell", "tools/vfs"} {
		if err := os.WriteFile(filepath.Join(plugins, filepath.Base(pkg)+".wasm"), plugbuild.Build(t, pkg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := host.DefaultConfig()
	cfg.Backend = "host"
	cfg.BundledTools = []string{"shell", "vfs"} // what main asks for with -http
	cfg.PluginDirs = []string{plugins}
	cfg.StateDir = t.TempDir()
	// The kernel keeps compiled plugins under <state_dir>/wasm: sharing the
	// tests' cache spares compiling them again under the race detector.
	if err := os.Symlink(plugbuild.CompilationCacheDir(t), filepath.Join(cfg.StateDir, "wasm")); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	serving, stop := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(serving, pw, cfg, "127.0.0.1:0")
		pw.Close()
		done <- err
	}()
	url, token := "", ""
	sc := bufio.NewScanner(pr)
	for url == "" && sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "serving MCP on "); ok {
			url = u
		}
		if tok, ok := strings.CutPrefix(sc.Text(), "bearer token: "); ok {
			token = tok
		}
	}
	if url == "" {
		stop()
		t.Fatalf("the example printed no address to serve MCP on: %v", <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()

	c := mcp.NewClient(&mcp.Implementation{Name: "embed-test", Version: "1"}, nil)
	hc := &http.Client{Transport: bearerTransport(token)}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(" "+strings.Join(names, " ")+" ", " shell_execute ") {
		t.Errorf("the embedded server offers %q, want shell_execute among them", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell_execute", Arguments: map[string]any{"command": []string{"echo", "embedded"}}})
	if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "embedded") {
		t.Errorf("shell_execute through the embedded server: %+v, %v", res, err)
	}
	cs.Close()
	stop()
	if err := <-done; err != nil {
		t.Errorf("the example after its context ended: %v", err)
	}
}

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
