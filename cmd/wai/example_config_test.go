package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	hostconfig "github.com/wai-dev/wai/host/config"
	"github.com/wai-dev/wai/plugins/podman"
)

// exampleBlocks returns the commented examples of wai.example.toml: each
// run of lines starting with "#   " (a hash and three spaces), with that
// prefix removed, is one TOML document as a user would paste it.
func exampleBlocks(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "wai.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
			cur = nil
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		if body, ok := strings.CutPrefix(line, "#   "); ok {
			cur = append(cur, body)
			continue
		}
		flush()
	}
	flush()
	return blocks
}

// Every commented example of wai.example.toml, uncommented, loads through
// the loader the CLI uses (hostconfig.Load), and its [backends.*] tables
// pass the backend's own parser: the documented examples stay loadable.
func TestExampleConfigBlocksLoad(t *testing.T) {
	blocks := exampleBlocks(t)
	var sawNested []string
	for _, block := range blocks {
		path := filepath.Join(t.TempDir(), "wai.toml")
		if err := os.WriteFile(path, []byte(block), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := hostconfig.Load(path)
		if err != nil {
			t.Errorf("this example of wai.example.toml does not load: %v\n%s", err, block)
			continue
		}
		for name, table := range cfg.Backends {
			raw, err := json.Marshal(table)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"env", "host_mounts"} {
				nested := strings.Contains(block, k+" = {") || strings.Contains(block, k+" = [{") ||
					strings.Contains(block, "[[backends."+name+"."+k+"]]") || strings.Contains(block, "[backends."+name+"."+k+"]")
				if _, ok := table[k]; ok && nested {
					sawNested = append(sawNested, name+"."+k)
				}
			}
			switch name {
			case "podman":
				if _, err := podman.ParseConfig(raw, t.TempDir()); err != nil {
					t.Errorf("the podman backend refuses this example: %v\n%s", err, block)
				}
			case "host":
				b, err := backend.Open(context.Background(), "host", backend.Options{Config: raw, StateDir: t.TempDir()})
				if err != nil {
					t.Errorf("the host backend refuses this example: %v\n%s", err, block)
					continue
				}
				_ = b.Close(context.Background())
			default:
				t.Errorf("an example configures backend %q, which this test does not check", name)
			}
		}
	}
	if len(blocks) < 8 {
		t.Fatalf("found %d commented examples in wai.example.toml; the convention is lines starting with \"#   \"", len(blocks))
	}
	for _, want := range []string{"host.env", "podman.host_mounts", "podman.env"} {
		if !strings.Contains(strings.Join(sawNested, " "), want) {
			t.Errorf("no example sets %s as a nested value (seen: %v)", want, sawNested)
		}
	}
}
