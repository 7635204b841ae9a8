package config

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	_ "github.com/wai-dev/wai/plugins/host"
	blockrules "github.com/wai-dev/wai/policies/blocklist/rules"
)

func TestExampleConfigIsTheDefaults(t *testing.T) {
	cfg, err := Load(filepath.Join("..", "..", "wai.example.toml"))
	if err != nil {
		t.Fatalf("wai.example.toml does not load: %v", err)
	}
	cfg.Path, cfg.backendLines = "", nil
	if want := Default(); !reflect.DeepEqual(cfg, want) {
		t.Errorf("wai.example.toml differs from DefaultConfig:\n got %+v\nwant %+v", cfg, want)
	}
}
func TestUnknownKeysNameKeyAndLine(t *testing.T) {
	data := `backend = "mock"
bakend = "host"

[limits]
max_output_bytes = 1024
max_outptu_bytes = 9

[[plugins]]
path = "a.wasm"

[[plugins]]
path = "b.wasm"
grant = ["shell"]

[wat]
x = 1
y = 2

[backends.host]
anything = "goes to the backend"
`
	_, err := Parse([]byte(data))
	if !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("want ErrInvalid, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`unknown key "bakend" at line 2: did you mean "backend"?`,
		`unknown key "limits.max_outptu_bytes" at line 6: did you mean "limits.max_output_bytes"?`,
		`unknown key "plugins.grant" at line 13: did you mean "plugins.grants"?`,
		`unknown key "wat" at line 15: check its spelling against wai.example.toml`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "wat.x") || strings.Contains(msg, "anything") {
		t.Errorf("keys inside an unknown table, or backend keys, were reported:\n%s", msg)
	}
}
func TestDurationsMustBeStrings(t *testing.T) {
	_, err := Parse([]byte("\n[tool_timeouts]\nshell_execute = 130\n"))
	if err == nil || !strings.Contains(err.Error(), `tool_timeouts.shell_execute at line 3 must be a duration string`) {
		t.Fatalf("an integer duration was not refused with its key and line: %v", err)
	}
	cfg, err := Parse([]byte("session_idle_timeout = \"2m\"\n[tool_timeouts]\nshell_execute = \"130s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SessionIdleTimeout != 2*time.Minute || cfg.ToolTimeout("shell_execute") != 130*time.Second || cfg.ToolTimeout("other") != host.DefaultToolTimeout {
		t.Errorf("durations decoded wrong: idle %s, shell_execute %s, other %s", cfg.SessionIdleTimeout, cfg.ToolTimeout("shell_execute"), cfg.ToolTimeout("other"))
	}
}
func TestTypeErrorsCarryTheLine(t *testing.T) {
	_, err := Parse([]byte("backend = \"host\"\nread_before_write = \"yes\"\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("want an error at line 2, got %v", err)
	}
	_, err = Parse([]byte("[limits]\nmin_timeout = \"soon\"\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("want an error at line 2, got %v", err)
	}
}
func TestFileOverlaysDefaults(t *testing.T) {
	cfg, err := Parse([]byte(`
backend = "mock"
bundled_tools = []
[limits]
max_output_bytes = 1024
[backends.podman]
image = "x"
memory = 5
[[policies]]
name = "allowlist"
config = { commands = ["ls"] }
`))
	if err != nil {
		t.Fatal(err)
	}
	def := Default()
	switch {
	case cfg.Backend != "mock":
		t.Errorf("backend %q", cfg.Backend)
	case cfg.Limits.MaxOutputBytes != 1024 || cfg.Limits.MaxCommandBytes != def.Limits.MaxCommandBytes:
		t.Errorf("limits not overlaid: %+v", cfg.Limits)
	case len(cfg.BundledTools) != 0:
		t.Errorf("bundled_tools = [] left %v", cfg.BundledTools)
	case !reflect.DeepEqual(cfg.DefaultPolicies, def.DefaultPolicies):
		t.Errorf("default_policies lost their default: %v", cfg.DefaultPolicies)
	case cfg.Backends["podman"]["image"] != "x" || cfg.Backends["podman"]["memory"] != int64(5):
		t.Errorf("backend table: %#v", cfg.Backends)
	case len(cfg.Policies) != 1 || cfg.Policies[0].Name != "allowlist":
		t.Errorf("policies: %+v", cfg.Policies)
	}
}

// Nested values under [backends.NAME] (inline tables, sub-tables, arrays
// of tables) load and reach the backend's table as the file wrote them.
func TestNestedBackendTablesLoad(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		want       map[string]map[string]any
	}{
		{"inline env", "[backends.host]\nenv = { FOO = \"bar\" }\n",
			map[string]map[string]any{"host": {"env": map[string]any{"FOO": "bar"}}}},
		{"env sub-table", "[backends.host.env]\nFOO = \"bar\"\n",
			map[string]map[string]any{"host": {"env": map[string]any{"FOO": "bar"}}}},
		{"inline host_mounts", "[backends.podman]\nhost_mounts = [{ host_path = \"/srv\", mount_path = \"d\" }]\n",
			map[string]map[string]any{"podman": {"host_mounts": []map[string]any{{"host_path": "/srv", "mount_path": "d"}}}}},
		{"array of tables", "[[backends.podman.host_mounts]]\nhost_path = \"/srv\"\nmount_path = \"d\"\n[[backends.podman.host_mounts]]\nhost_path = \"/opt\"\nmount_path = \"o\"\n",
			map[string]map[string]any{"podman": {"host_mounts": []map[string]any{{"host_path": "/srv", "mount_path": "d"}, {"host_path": "/opt", "mount_path": "o"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wai.toml")
			if err := os.WriteFile(path, []byte(tc.toml), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path)
			if err != nil {
				t.Fatalf("does not load: %v", err)
			}
			got, _ := json.Marshal(cfg.Backends)
			want, _ := json.Marshal(tc.want)
			if string(got) != string(want) {
				t.Errorf("backends %s, want %s", got, want)
			}
		})
	}
}

// A key a backend does not know, however deep, is still refused: by the
// backend's own parser, with the line of the file it is on.
func TestUnknownNestedBackendKeyNamesItsLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wai.toml")
	data := "backend = \"host\"\n\n[backends.host]\nshell = \"/bin/sh\"\nenvv = { FOO = \"bar\" }\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.StateDir = t.TempDir()
	cfg.BundledTools = []string{}
	ctx := context.Background()
	k, err := host.New(ctx, cfg.Kernel()) // the host backend is linked in by this file
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(ctx)
	_, err = k.Info(ctx)
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), `unknown field "envv"`) || !strings.Contains(err.Error(), path+", line 5") {
		t.Fatalf("want the host backend's refusal of envv at %s line 5, got %v", path, err)
	}
}
func TestLoadConfigSearchPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	xdg := filepath.Join(dir, "xdg")
	t.Setenv("XDG_CONFIG_HOME", xdg)

	cfg, err := Load("")
	if err != nil || cfg.Path != "" || cfg.Backend != Default().Backend {
		t.Fatalf("no file: want the defaults, got %+v, %v", cfg, err)
	}
	if err := os.MkdirAll(filepath.Join(xdg, "wai"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "wai", "config.toml"), []byte(`backend = "mock"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err = Load(""); err != nil || cfg.Backend != "mock" {
		t.Fatalf("XDG config not read: %+v, %v", cfg, err)
	}
	if err := os.WriteFile("wai.toml", []byte(`backend = "podman"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err = Load(""); err != nil || cfg.Backend != "podman" || cfg.Path != "wai.toml" {
		t.Fatalf("./wai.toml must win over XDG: %+v, %v", cfg, err)
	}
	if _, err = Load(filepath.Join(dir, "missing.toml")); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("a missing --config must be an error, got %v", err)
	}
	if err := os.WriteFile("bad.toml", []byte("\n\nnope = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err = Load("bad.toml"); err == nil || !strings.Contains(err.Error(), "bad.toml") || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("error must name the file and line: %v", err)
	}
}

// TestExampleBlocklistSettingsAreTheDefaults: the commented blocklist
// entry of wai.example.toml loads and gives the blocklist's defaults.
func TestExampleBlocklistSettingsAreTheDefaults(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "wai.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// The entry is the commented [[policies]] block naming the blocklist,
	// up to the first line that is not an indented comment.
	var entry []string
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		if line != "#   [[policies]]" || i+1 == len(lines) || lines[i+1] != `#   name = "blocklist"` {
			continue
		}
		for _, l := range lines[i:] {
			body, ok := strings.CutPrefix(l, "#   ")
			if !ok || (len(entry) > 0 && strings.HasPrefix(body, "[")) {
				break
			}
			entry = append(entry, body)
		}
		break
	}
	if len(entry) < 3 {
		t.Fatalf("wai.example.toml shows no commented [[policies]] entry for the blocklist: %q", entry)
	}
	cfg, err := Parse([]byte("default_policies = []\n" + strings.Join(entry, "\n")))
	if err != nil {
		t.Fatalf("wai.example.toml's blocklist entry does not load: %v", err)
	}
	raw, err := json.Marshal(cfg.Policies[0].Config)
	if err != nil {
		t.Fatal(err)
	}
	got, err := blockrules.ParseConfig(raw)
	if err != nil {
		t.Fatalf("wai.example.toml's blocklist config: %v", err)
	}
	want := blockrules.Config{Patterns: blockrules.DefaultPatterns, ExtraPatterns: []string{}, MaxCommandBytes: blockrules.DefaultMaxCommandBytes, DisableRules: []string{}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("wai.example.toml's blocklist config is %+v, the defaults are %+v", got, want)
	}
}
