//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

func TestAgentConfig(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig(nil, t.TempDir())
	if err != nil || !c.agentEnabled() {
		t.Fatalf("defaults: %v, agent %v; want the agent on", err, c.agentEnabled())
	}
	if c, err = ParseConfig([]byte(`{"agent":false}`), t.TempDir()); err != nil || c.agentEnabled() {
		t.Errorf("agent = false: %v, agent %v", err, c.agentEnabled())
	}
	if _, err = ParseConfig([]byte(`{"agent_path":"wai-agent"}`), t.TempDir()); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("relative agent_path: %v, want ErrInvalid", err)
	}
}

// The binary lands content-addressed, read-only, once; a missing
// agent_path is a clear error; agent = false provisions nothing.
func TestProvisionAgent(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "wai-agent")
	if err := os.WriteFile(src, []byte("agent build 1"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.AgentPath = src
	p1, err := provisionAgent(cfg, dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p1)
	if err != nil || fi.Mode().Perm() != 0o555 || !strings.HasPrefix(p1, filepath.Join(dir, agentDirName)+"/wai-agent-") {
		t.Fatalf("provisioned %s: %v, mode %v", p1, err, fi.Mode())
	}
	if p2, err := provisionAgent(cfg, dir); err != nil || p2 != p1 {
		t.Errorf("second provision: %s, %v; want the same file", p2, err)
	}
	if err := os.WriteFile(src, []byte("agent build 2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p3, err := provisionAgent(cfg, dir); err != nil || p3 == p1 {
		t.Errorf("another build: %s, %v; want a file of its own next to the first", p3, err)
	}
	if _, err := os.Stat(p1); err != nil {
		t.Errorf("the first build's file went away (containers still mount it): %v", err)
	}
	cfg.AgentPath = filepath.Join(dir, "missing")
	if _, err := provisionAgent(cfg, dir); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "go build") {
		t.Errorf("missing agent_path: %v, want ErrInvalid saying how to build one", err)
	}
	cfg.Agent = false
	if p, err := provisionAgent(cfg, dir); p != "" || err != nil {
		t.Errorf("agent = false: %q, %v; want nothing", p, err)
	}
}
