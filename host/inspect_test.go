package host_test

import (
	"context"
	"slices"
	"testing"

	"github.com/wai-dev/wai/host"
)

// InspectPlugin reports what a plugin declares and imports without a
// config entry granting it anything.
func TestInspectPlugin(t *testing.T) {
	cfg := host.DefaultConfig()
	cfg.StateDir = host.SharedStateDir
	path := pluginFile(t, "examples/hello")
	info, err := host.InspectPlugin(context.Background(), cfg, path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "hello" || info.Kind != "tool" || info.ABI != 1 || len(info.SHA256) != 64 ||
		!slices.Equal(info.Capabilities, []string{"shell"}) || !slices.Contains(info.Imports, "wai_shell_exec") ||
		len(info.Tools) != 1 || info.Tools[0].Name != "hello" || info.Tools[0].Annotations == nil || !info.Tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("%+v", info)
	}
	if _, err := host.InspectPlugin(context.Background(), cfg, path+".missing"); err == nil {
		t.Fatal("a missing file must be an error")
	}
}
