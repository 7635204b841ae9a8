package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wai-dev/wai/internal/plugbuild"
)

// readmeBlocks returns the README's fenced code blocks of one language.
func readmeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?ms)^```" + lang + "\n(.*?)^```")
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// readmeBlock returns the one block of lang that contains marker.
func readmeBlock(t *testing.T, lang, marker string) string {
	t.Helper()
	var found []string
	for _, b := range readmeBlocks(t, lang) {
		if strings.Contains(b, marker) {
			found = append(found, b)
		}
	}
	if len(found) != 1 {
		t.Fatalf("README.md has %d ```%s blocks containing %q, want 1", len(found), lang, marker)
	}
	return found[0]
}

// The README's snippets for the three kinds of users work as written,
// with only their /path/to placeholders filled in.
func TestReadmeSnippets(t *testing.T) {
	t.Parallel()
	plugins := t.TempDir()
	for _, pkg := range []string{"tools/shell", "tools/vfs", "policies/allowlist"} {
		if err := os.WriteFile(filepath.Join(plugins, filepath.Base(pkg)+".wasm"), plugbuild.Build(t, pkg), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The mcpServers entry an agent is given: the same command, args and
	// env, and the agent sees wai's tools and runs a command.
	t.Run("mcpServers config", func(t *testing.T) {
		t.Parallel()
		var cfg struct {
			MCPServers map[string]struct {
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(readmeBlock(t, "json", "mcpServers")), &cfg); err != nil {
			t.Fatalf("the README's mcpServers snippet is not JSON: %v", err)
		}
		srv, ok := cfg.MCPServers["wai"]
		if !ok {
			t.Fatalf("the README's mcpServers snippet has no \"wai\" entry: %+v", cfg)
		}
		e := newEnv(t, "bundled_tools = [\"shell\", \"vfs\"]\n")
		waiBin := waiBinary(t)
		fill := strings.NewReplacer("/path/to/wai/bin/wai", waiBin, "/path/to/wai.toml", e.config,
			"/path/to/wai/build/plugins", plugins)
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		cmd := e.command(ctx)
		cmd.Path = fill.Replace(srv.Command)
		cmd.Args = []string{cmd.Path}
		for _, a := range srv.Args {
			cmd.Args = append(cmd.Args, fill.Replace(a))
		}
		for k, v := range srv.Env {
			cmd.Env = append(cmd.Env, k+"="+fill.Replace(v))
		}
		cmd.Stdin = nil
		if cmd.Path != waiBin {
			t.Fatalf("the snippet's command %q is not /path/to/wai/bin/wai", srv.Command)
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "readme-test", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connecting as the snippet says (%s %q): %v", cmd.Path, cmd.Args[1:], err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell_execute", Arguments: map[string]any{"command": []string{"echo", "from the readme"}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Content) == 0 || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "from the readme") {
			t.Errorf("shell_execute through the snippet's server: %+v", res)
		}
	})

	// The [[plugins]] entry of "Writing a tool plugin", with hello built
	// as the README says.
	t.Run("tool plugin", func(t *testing.T) {
		t.Parallel()
		hello := filepath.Join(t.TempDir(), "hello.wasm")
		if err := os.WriteFile(hello, plugbuild.Build(t, "examples/hello"), 0o644); err != nil {
			t.Fatal(err)
		}
		snippet := strings.ReplaceAll(readmeBlock(t, "toml", "[[plugins]]"), "/path/to/hello.wasm", hello)
		e := newEnv(t, "plugin_dir = \""+plugins+"\"\nbundled_tools = []\n"+snippet)
		if r := e.run("tools", "--config", e.config); r.code != 0 || !strings.Contains(r.stdout, "hello") {
			t.Fatalf("wai tools with the README's [[plugins]] entry: want hello listed; got %v", r)
		}
		if r := e.run("call", "--config", e.config, "hello", `{"name":"readme"}`); r.code != 0 || !strings.Contains(r.stdout, "hello, readme") {
			t.Errorf("wai call hello: %v", r)
		}
	})

	// The [[policies]] entry of "Writing a policy plugin": the commands it
	// lists run, others are refused by the allowlist.
	t.Run("policy plugin", func(t *testing.T) {
		t.Parallel()
		snippet := readmeBlock(t, "toml", "[[policies]]")
		e := newEnv(t, "plugin_dir = \""+plugins+"\"\nbundled_tools = []\n"+snippet)
		if r := e.run("exec", "--", "ls"); r.code != 0 {
			t.Errorf("ls, which the README's allowlist lists: %v", r)
		}
		if r := e.run("exec", "--", "touch", "x"); r.code == 0 || !strings.Contains(r.stderr, "allowlist") {
			t.Errorf("touch, which the README's allowlist does not list: want a refusal naming the allowlist; got %v", r)
		}
	})
}
