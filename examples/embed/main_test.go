package main

import (
	"context"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
)

// The README's embedding example runs as documented.
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
