package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wai-dev/wai/internal/plugbuild"
)

func TestPluginInspect(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	wasmBytes := plugbuild.Build(t, "tools/podman_shell")
	file := filepath.Join(t.TempDir(), "podman_shell.wasm")
	if err := os.WriteFile(file, wasmBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasmBytes)

	r := e.run("plugin", "inspect", "--json", "--config", e.config, file)
	var got inspectJSON
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil {
		t.Fatalf("wai plugin inspect --json: %s", r)
	}
	if got.SHA256 != hex.EncodeToString(sum[:]) || got.Name != "podman_shell" || got.Kind != "tool" || got.ABI != 1 {
		t.Fatalf("identity: %+v", got)
	}
	if !slices.Equal(got.Capabilities, []string{"shell", "lifecycle"}) && !slices.Equal(got.Capabilities, []string{"lifecycle", "shell"}) {
		t.Fatalf("capabilities %v, want shell and lifecycle", got.Capabilities)
	}
	for _, imp := range []string{"wai_shell_exec", "wai_shell_info"} {
		if !slices.Contains(got.Imports, imp) {
			t.Errorf("imports %v lack %s", got.Imports, imp)
		}
	}
	if len(got.Tools) != 1 || got.Tools[0].Name != "podman_shell" || !strings.Contains(string(got.Tools[0].InputSchema), `"action"`) ||
		got.Tools[0].Annotations == nil || got.Tools[0].Annotations.ReadOnlyHint || got.Tools[0].Annotations.DestructiveHint == nil || !*got.Tools[0].Annotations.DestructiveHint {
		t.Fatalf("tools: %+v", got.Tools)
	}

	r = e.run("plugin", "inspect", "--config", e.config, file)
	for _, want := range []string{"sha256:       " + got.SHA256, "podman_shell 1.0.0 (tool plugin, abi 1)", "capabilities: ", "imports:      ", "tool podman_shell: "} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("text output lacks %q: %s", want, r)
		}
	}

	notWasm := filepath.Join(t.TempDir(), "x.wasm")
	if err := os.WriteFile(notWasm, []byte("not a module"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"inspect", notWasm}, {"inspect", filepath.Join(t.TempDir(), "missing.wasm")}, {"inspect"}, {"show", file}} {
		if r := e.run(append([]string{"plugin"}, args...)...); r.code != 2 || r.stderr == "" {
			t.Errorf("wai plugin %q: want exit 2 with a message, got %s", args, r)
		}
	}
}
